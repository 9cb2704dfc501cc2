// Package dsn turns the addresses lockbench is given for its database
// roles into connection strings. A role's address is either host:port of
// a server set up the way the sandbox sets one up (PostgreSQL's user
// postgres and database postgres, MariaDB's root; no password, trusted on
// loopback) or a full DSN the user wrote, which is used as it is. The
// sandbox and the drivers read the same defaults from here.
package dsn

import "strings"

// Defaults of a sandboxed server: who connects, to which database.
const (
	PostgresUser     = "postgres"
	PostgresDatabase = "postgres"
	MySQLUser        = "root"
)

// IsDSN reports whether addr is a connection string rather than a bare
// host:port: it names a scheme, a user or keyword settings.
func IsDSN(addr string) bool {
	return strings.Contains(addr, "://") || strings.Contains(addr, "@") || strings.Contains(addr, "=")
}

// Postgres returns a pgx connection string for addr. sslmode=disable
// because a sandboxed server has no certificate and loopback needs none.
func Postgres(addr string) string {
	if IsDSN(addr) {
		return addr
	}
	return "postgres://" + PostgresUser + "@" + addr + "/" + PostgresDatabase + "?sslmode=disable"
}

// MySQL returns a go-sql-driver/mysql DSN for addr.
func MySQL(addr string) string {
	if IsDSN(addr) {
		return addr
	}
	return MySQLUser + "@tcp(" + addr + ")/"
}
