// Package postgres is the sandbox's PostgreSQL kind: Debian's server from
// a data template, run as its own account, its settings per profile, its
// version and its statistics counters.
package postgres

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockbench/lockbench/internal/dsn"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// postgresUser is the account a sandboxed PostgreSQL runs as when
// lockbench runs as root: initdb and postgres refuse root.
const postgresUser = "postgres"

func init() {
	sandbox.RegisterKind(sandbox.Kind{
		Name: serverkind.Postgres, Flag: "postgres",
		Start:   startPostgres,
		Find:    func() error { _, err := postgresBinDir(); return err },
		Stats:   postgresStats,
		Version: postgresVersion,
		Settings: func(p sandbox.Profile) string {
			if p == sandbox.ProfileFast {
				return strings.Join(postgresFast, " ")
			}
			return "fsync, synchronous_commit and full_page_writes on (PostgreSQL's defaults)"
		},
	})
}

// postgresFast is what the fast profile turns off: every sync to disk.
// The locks lockbench takes (advisory locks, a row lock in a
// transaction that writes nothing) write no WAL that must be synced, so
// the two profiles should measure alike.
var postgresFast = []string{"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"}

// postgresBinDir finds the directory holding initdb and postgres:
// $LOCKBENCH_PG_BIN, the directory of an initdb on PATH, or the newest
// Debian /usr/lib/postgresql/N/bin (Debian keeps them off PATH).
func postgresBinDir() (string, error) {
	ok := func(d string) bool {
		_, e1 := os.Stat(filepath.Join(d, "initdb"))
		_, e2 := os.Stat(filepath.Join(d, "postgres"))
		return e1 == nil && e2 == nil
	}
	if d := os.Getenv("LOCKBENCH_PG_BIN"); d != "" && ok(d) {
		return d, nil
	}
	if p, err := exec.LookPath("initdb"); err == nil && ok(filepath.Dir(p)) {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return majorOf(b) - majorOf(a) })
	for _, d := range dirs {
		if ok(d) {
			return d, nil
		}
	}
	return "", &sandbox.MissingError{What: "PostgreSQL (initdb and postgres; $LOCKBENCH_PG_BIN, PATH or /usr/lib/postgresql/N/bin)",
		Install: "apt-get install -y postgresql"}
}

// majorOf reads N from /usr/lib/postgresql/N/bin.
func majorOf(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// startPostgres initialises and starts n independent servers.
func startPostgres(ctx context.Context, dir string, n int) ([]*sandbox.Server, error) {
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	var out []*sandbox.Server
	for i := range n {
		s, err := startOnePostgres(ctx, bin, dir, filepath.Join(dir, fmt.Sprintf("postgres-%d", i)))
		if s != nil {
			out = append(out, s)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// startOnePostgres gives d a data directory initialised by initdb (see
// dataFrom) and starts the server on a free
// loopback port, TCP only (no Unix socket to leave behind), with fsync
// as the profile says and room for sandbox.DatabaseConnections clients. Its
// data directory stays across Stop and Restart, as a real server's does;
// its locks, held in memory, do not.
func startOnePostgres(ctx context.Context, bin, top, d string) (*sandbox.Server, error) {
	data := filepath.Join(d, "data")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if err := sandbox.HandOver(postgresUser, filepath.Dir(top), d); err != nil {
		return nil, err
	}
	if err := sandbox.DataFrom(ctx, "postgres "+bin, postgresUser, data, func(ctx context.Context, dir string) error {
		initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", dir, "-A", "trust", "-U", dsn.PostgresUser,
			"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
		if err := sandbox.RunAs(initdb, postgresUser); err != nil {
			return err
		}
		if b, err := initdb.CombinedOutput(); err != nil {
			return fmt.Errorf("sandbox: initdb: %w: %s", err, sandbox.LastLines(string(b), 3))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	ports, err := sandbox.FreePorts(1)
	if err != nil {
		return nil, err
	}
	p := sandbox.Process{
		Kind: serverkind.Postgres, Addr: "127.0.0.1:" + strconv.Itoa(ports[0]), Dir: d, Bin: filepath.Join(bin, "postgres"),
		Log: filepath.Join(d, "postgres.log"), User: postgresUser,
		// SIGTERM is a smart shutdown, which waits for every client to
		// leave; SIGINT ends their sessions and stops at once.
		StopSignal: syscall.SIGINT,
		Prestart:   func(ctx context.Context) error { return waitBackendsGone(ctx, data) },
		Args: []string{"-D", data, "-p", strconv.Itoa(ports[0]),
			"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
			"-c", "max_connections=" + strconv.Itoa(sandbox.DatabaseConnections)},
		Ready: postgresReady,
	}
	if sandbox.Fast(ctx) {
		p.Args = append(p.Args, postgresFast...)
	}
	return sandbox.Launch(ctx, p)
}

// postgresReady answers once the server accepts a session and a query,
// asked on template1 so that the clients' database counts only clients.
func postgresReady(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, _, err := postgresObserver(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	return c.Ping(ctx)
}

// postgresCounters names the pg_stat_database columns Stats reports, each
// under a pg_ prefix. In autocommit every statement is a transaction of
// its own, so pg_xact_commit counts the lock calls clients made.
// (sessions is left out: a session counts when its backend exits, which
// may come after the reading that follows a client's Close.)
var postgresCounters = []string{"xact_commit", "xact_rollback"}

// postgresStats reads the counters of the database each address's
// clients use, summed over addresses. It reads them from template1 when it
// may, so that its own session and query do not count.
func postgresStats(ctx context.Context, addrs []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, a := range addrs {
		c, db, err := postgresObserver(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", sandbox.ErrStatsRefused, a, err)
		}
		vals := make([]int64, len(postgresCounters))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		// Backends publish their counts when idle at most once a second
		// and in full when they exit; a snapshot read now is as fresh as
		// the server has it.
		err = c.QueryRow(ctx, "SELECT "+strings.Join(postgresCounters, ", ")+" FROM pg_stat_database WHERE datname = $1", db).Scan(ptrs...)
		c.Close(context.Background())
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", sandbox.ErrStatsRefused, a, err)
		}
		for i, k := range postgresCounters {
			out["pg_"+k] += vals[i]
		}
	}
	return out, nil
}

// postgresObserver connects to the server of addr on template1 (or, if
// that is refused, the address's own database) and returns the database
// whose clients the caller wants to look at.
func postgresObserver(ctx context.Context, addr string) (*pgx.Conn, string, error) {
	cfg, err := pgx.ParseConfig(dsn.Postgres(addr))
	if err != nil {
		return nil, "", err
	}
	db := cfg.Database
	side := cfg.Copy()
	side.Database = "template1"
	if c, err := pgx.ConnectConfig(ctx, side); err == nil {
		return c, db, nil
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	return c, db, err
}

// postgresVersion asks the server its version: "postgres 15.18".
func postgresVersion(ctx context.Context, addr string) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, _, err := postgresObserver(ctx, addr)
	if err != nil {
		return "unreachable: " + err.Error()
	}
	defer c.Close(context.Background())
	var v string
	if err := c.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return "no answer: " + err.Error()
	}
	v, _, _ = strings.Cut(v, " ")
	return "postgres " + v
}

// waitBackendsGone waits until no process works in data: the backends of
// a killed postmaster live on (each in a session of its own, out of the
// process group Kill signals) until they notice it died, holding its
// shared memory, and a new postmaster refuses to start beside them.
func waitBackendsGone(ctx context.Context, data string) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for sandbox.InUse(data) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("sandbox: processes of a previous postgres still work in %s: %w", data, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}
