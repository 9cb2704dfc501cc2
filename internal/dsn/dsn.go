// Package dsn turns the addresses lockbench is given for its database
// roles into connection strings. A role's address is either host:port of
// a server set up the way the sandbox sets one up (PostgreSQL's user
// postgres and database postgres, MariaDB's root; no password, trusted on
// loopback) or a full DSN the user wrote, which is used as it is. The
// sandbox and the drivers read the same defaults from here.
package dsn

import (
	"net/url"
	"regexp"
	"strings"
)

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

// Redact returns addr with any password in it replaced by xxxxx, for
// messages and results files: a connection string the user wrote may
// carry one (postgres://u:pw@…, password=pw, u:pw@tcp(…)).
func Redact(addr string) string {
	switch {
	case !IsDSN(addr):
		return addr
	case strings.Contains(addr, "://"):
		if u, err := url.Parse(addr); err == nil {
			return u.Redacted()
		}
		return "(a connection string that does not parse)"
	case strings.Contains(addr, "="):
		if !strings.Contains(addr, "@") || strings.Contains(addr, "password") {
			return keywordPassword.ReplaceAllString(addr, "${1}xxxxx")
		}
	}
	// go-sql-driver's user:password@net(addr)/db: the password runs from
	// the user's colon to the last @ before the database's slash.
	head, tail := addr, ""
	if i := strings.LastIndex(addr, "/"); i >= 0 {
		head, tail = addr[:i], addr[i:]
	}
	at := strings.LastIndex(head, "@")
	if at < 0 {
		return addr
	}
	if colon := strings.Index(head[:at], ":"); colon >= 0 {
		return head[:colon+1] + "xxxxx" + head[at:] + tail
	}
	return addr
}

// keywordPassword finds a password setting in a key=value connection
// string, quoted or not.
var keywordPassword = regexp.MustCompile(`(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)`)
