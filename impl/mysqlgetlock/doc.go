// Package mysqlgetlock implements mysql-getlock: MySQL's and MariaDB's
// named user locks, GET_LOCK(name, 31536000) (a year: MariaDB refuses the negative "no limit" MySQL takes) and
// RELEASE_LOCK(name), through go-sql-driver/mysql, each client on a
// *sql.Conn pinned for its life (the lock belongs to the connection). The
// two statements are prepared once per connection, as pgx's statement
// cache does for the PostgreSQL drivers, so a call is one round trip.
//
// The server queues a waiter inside its GET_LOCK (MariaDB's metadata-lock
// subsystem grants the oldest compatible request first): the theory is
// impl.ServerQueue. The driver's own cancellation of a query closes the
// connection, and a waiter on a closed connection stays queued until the
// server notices; so the query runs without the caller's ctx, and when
// ctx ends the driver sends KILL QUERY for the client's connection from a
// control connection shared by the process, then undoes a grant that
// raced the kill with RELEASE_LOCK.
//
// Settled asks the server too: the control connection's SHOW PROCESSLIST
// lists the client's connection in state "User lock". Lock names are the
// cell's namespace and the name, hashed where they would pass MySQL's 64
// characters.
package mysqlgetlock
