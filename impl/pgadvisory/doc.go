// Package pgadvisory implements PostgreSQL's advisory locks as three
// drivers, each client on a pgx v5 connection of its own (the lock belongs
// to the session):
//
//   - pg-advisory: pg_advisory_lock blocks in the server's lock queue;
//     pg_advisory_unlock releases.
//   - pg-try: pg_try_advisory_lock polled every --retry ± --jitter, what
//     many job runners and ORMs do.
//   - pg-xact: pg_advisory_xact_lock inside a transaction, released by
//     COMMIT, what migration tools do.
//
// A lock name maps to the two-key form (namespace, name), each a 32-bit
// FNV-1a hash, so that the server's pg_locks rows of one cell can be
// counted by their classid.
//
// Cancelling a waiting acquire cancels it on the server: the connections
// use pgx's cancel-request handler, which sends PostgreSQL's cancel
// request when ctx ends. pgx's default handler only sets a deadline on the
// socket, which drops the connection and leaves the backend queued until
// the lock reaches it. A grant that raced the cancel is undone by an
// unlock before Acquire returns ctx.Err().
//
// Waiters in the server's queue receive nothing until their request is
// answered: the theory is impl.ServerQueue. Settled asks the server: a
// shared observer connection (on template1, so that the clients'
// database counts only clients) lists the backends waiting on advisory
// locks in pg_locks, and a client is settled once its backend is among
// them.
package pgadvisory
