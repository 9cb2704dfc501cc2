package sandbox_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockbench/lockbench/internal/dsn"
	"github.com/lockbench/lockbench/internal/serverkind"

	"github.com/lockbench/lockbench/internal/sandbox"
	_ "github.com/lockbench/lockbench/internal/sandbox/kinds"
	mysqlkind "github.com/lockbench/lockbench/internal/sandbox/mysql"
)

// startKind starts one server of kind, skipping when it is not installed
// (failing with CI set, as sandboxtest does).
func startKind(t *testing.T, kind string) *sandbox.Fleet {
	t.Helper()
	f, err := sandbox.Start(context.Background(), sandbox.Spec{kind: 1})
	if errors.Is(err, sandbox.ErrMissing) && sandbox.MissingFails() {
		t.Fatalf("%v (CI is set: a missing server fails the test)", err)
	}
	if errors.Is(err, sandbox.ErrMissing) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestDatabaseKinds starts each database kind, reads its version and
// counters, sees its statement counter move with queries a client sends,
// and checks that Close leaves no process of the server's group and no
// directory behind.
func TestDatabaseKinds(t *testing.T) {
	for _, tc := range []struct {
		kind, version, counter string
		query                  func(ctx context.Context, addr string, n int) error
		// extra is what the client's set-up adds: pgx prepares its
		// statement first, and the Parse's Sync ends a transaction.
		extra int64
	}{
		{serverkind.Postgres, "postgres 1", "pg_xact_commit", pgQueries, 1},
		{serverkind.MySQL, "mariadb 1", "mysql_com_select", mysqlQueries, 0},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			f := startKind(t, tc.kind)
			ctx := context.Background()
			s := f.Servers[tc.kind][0]
			if !strings.HasPrefix(s.Addr, "127.0.0.1:") {
				t.Errorf("not on loopback: %s", s.Addr)
			}
			k, _ := sandbox.LookupKind(tc.kind)
			if v := k.Version(ctx, s.Addr); !strings.HasPrefix(v, tc.version) {
				t.Errorf("version %q, want %q…", v, tc.version)
			}
			before, err := k.Stats(ctx, []string{s.Addr})
			if err != nil {
				t.Fatal(err)
			}
			const n = 25
			if err := tc.query(ctx, s.Addr, n); err != nil {
				t.Fatal(err)
			}
			after := waitCounter(t, k, s.Addr, tc.counter, before[tc.counter]+n+tc.extra)
			if got := after[tc.counter] - before[tc.counter]; got != n+tc.extra {
				t.Errorf("%s moved by %d over %d statements, want %d", tc.counter, got, n, n+tc.extra)
			}
			pid, _ := s.Pid()
			dir := f.Dir()
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("process group %d still alive after Close (%v)", pid, err)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("temp dir %s left behind", dir)
			}
		})
	}
}

// waitCounter reads the counters until name reaches want or a few
// seconds pass: PostgreSQL's backends publish theirs when idle, at most
// once a second.
func waitCounter(t *testing.T, k sandbox.Kind, addr, name string, want int64) map[string]int64 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		m, err := k.Stats(context.Background(), []string{addr})
		if err != nil {
			t.Fatal(err)
		}
		if m[name] >= want || time.Now().After(deadline) {
			return m
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func pgQueries(ctx context.Context, addr string, n int) error {
	c, err := pgx.Connect(ctx, dsn.Postgres(addr))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	for range n {
		if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
			return err
		}
	}
	return nil
}

func mysqlQueries(ctx context.Context, addr string, n int) error {
	db, err := mysqlkind.Open(addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for range n {
		if _, err := conn.ExecContext(ctx, "SELECT 1"); err != nil {
			return err
		}
	}
	return nil
}
