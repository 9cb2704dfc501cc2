// Package mysql is the sandbox's MySQL kind, served by MariaDB: its data
// template, account, settings per profile, version and status counters.
package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/lockbench/lockbench/internal/dsn"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// mysqlUser is the account a sandboxed MariaDB runs as when lockbench runs
// as root (mariadbd refuses root unless told otherwise, and would switch
// itself, losing the parent-death signal).
const mysqlUser = "mysql"

func init() {
	sandbox.RegisterKind(sandbox.Kind{
		Name: serverkind.MySQL, Flag: "mysql",
		Start:   startMySQL,
		Find:    func() error { _, _, err := mysqlBinaries(); return err },
		Stats:   mysqlStats,
		Version: mysqlVersion,
		Settings: func(p sandbox.Profile) string {
			if p == sandbox.ProfileFast {
				return strings.Join(mysqlFast, " ")
			}
			return "InnoDB's log flushed at each commit, doublewrite on (MariaDB's defaults)"
		},
	})
}

// mysqlFast is what the fast profile turns off: the log flush at each
// commit and the doublewrite buffer. GET_LOCK writes nothing, so the two
// profiles should measure alike.
var mysqlFast = []string{"--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0", "--sync-binlog=0"}

// mysqlBinaries finds the server and its data-directory initialiser:
// MariaDB's names first, then MySQL-era ones, on PATH or in Debian's
// /usr/sbin (often off a user's PATH).
func mysqlBinaries() (server, install string, err error) {
	find := func(names ...string) string {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				return p
			}
			for _, d := range []string{"/usr/sbin", "/usr/bin", "/usr/local/bin"} {
				if st, err := os.Stat(filepath.Join(d, n)); err == nil && !st.IsDir() {
					return filepath.Join(d, n)
				}
			}
		}
		return ""
	}
	server, install = find("mariadbd", "mysqld"), find("mariadb-install-db", "mysql_install_db")
	if server == "" || install == "" {
		return "", "", &sandbox.MissingError{What: "MariaDB (mariadbd and mariadb-install-db)", Install: "apt-get install -y mariadb-server"}
	}
	return server, install, nil
}

// startMySQL initialises and starts n independent servers.
func startMySQL(ctx context.Context, dir string, n int) ([]*sandbox.Server, error) {
	server, install, err := mysqlBinaries()
	if err != nil {
		return nil, err
	}
	var out []*sandbox.Server
	for i := range n {
		s, err := startOneMySQL(ctx, server, install, dir, filepath.Join(dir, fmt.Sprintf("mysql-%d", i)))
		if s != nil {
			out = append(out, s)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// startOneMySQL gives d a data directory made by mariadb-install-db (see
// dataFrom) and starts MariaDB on a
// free loopback port, its socket and pid file in d too, logs flushed as
// the profile says, room for sandbox.DatabaseConnections clients, and
// the metadata_lock_info plugin loaded, so that the locks GET_LOCK holds
// can be listed.
func startOneMySQL(ctx context.Context, server, install, top, d string) (*sandbox.Server, error) {
	data := filepath.Join(d, "data")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if err := sandbox.HandOver(mysqlUser, filepath.Dir(top), d); err != nil {
		return nil, err
	}
	if err := sandbox.DataFrom(ctx, "mysql "+install, mysqlUser, data, func(ctx context.Context, dir string) error {
		initdb := exec.CommandContext(ctx, install, "--no-defaults", "--datadir="+dir,
			"--auth-root-authentication-method=normal", "--skip-test-db")
		initdb.Dir = filepath.Dir(dir)
		if err := sandbox.RunAs(initdb, mysqlUser); err != nil {
			return err
		}
		if b, err := initdb.CombinedOutput(); err != nil {
			return fmt.Errorf("sandbox: %s: %w: %s", filepath.Base(install), err, sandbox.LastLines(string(b), 3))
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
		Kind: serverkind.MySQL, Addr: "127.0.0.1:" + strconv.Itoa(ports[0]), Dir: d, Bin: server,
		Log: filepath.Join(d, "mariadbd.log"), User: mysqlUser,
		Args: []string{"--no-defaults", "--datadir=" + data, "--port=" + strconv.Itoa(ports[0]),
			"--bind-address=127.0.0.1", "--socket=" + filepath.Join(d, "mysqld.sock"),
			"--pid-file=" + filepath.Join(d, "mariadbd.pid"), "--skip-name-resolve",
			"--max-connections=" + strconv.Itoa(sandbox.DatabaseConnections),
			"--plugin-load-add=metadata_lock_info"},
		Ready: mysqlReady,
	}
	if sandbox.Fast(ctx) {
		p.Args = append(p.Args, mysqlFast...)
	}
	return sandbox.Launch(ctx, p)
}

// Open opens a pool of at most one connection to addr, bounded in
// dialing by timeout.
func Open(addr string, timeout time.Duration) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(dsn.MySQL(addr))
	if err != nil {
		return nil, err
	}
	cfg.Timeout = timeout
	cfg.Logger = &mysql.NopLogger{} // errors are returned; stderr is lockbench's
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	return db, nil
}

// mysqlReady answers once the server accepts a login and a ping.
func mysqlReady(ctx context.Context, addr string) error {
	db, err := Open(addr, time.Second)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// mysqlCounters are the global status variables Stats reports, by the
// name it reports them under. GET_LOCK and RELEASE_LOCK are SELECTs, so
// mysql_com_select counts the lock calls clients made; Stats's own SHOW
// is not one.
var mysqlCounters = map[string]string{
	"Com_select": "mysql_com_select",
	"Questions":  "mysql_questions",
}

// mysqlStats reads the servers' global status, summed over addrs.
func mysqlStats(ctx context.Context, addrs []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, a := range addrs {
		if err := readMySQLStatus(ctx, a, out); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", sandbox.ErrStatsRefused, a, err)
		}
	}
	return out, nil
}

func readMySQLStatus(ctx context.Context, addr string, out map[string]int64) error {
	db, err := Open(addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select', 'Questions')")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return err
		}
		if k, ok := mysqlCounters[name]; ok {
			n, _ := strconv.ParseInt(value, 10, 64)
			out[k] += n
		}
	}
	return rows.Err()
}

// mysqlVersion asks the server its version: "mariadb 10.11.19".
func mysqlVersion(ctx context.Context, addr string) string {
	db, err := Open(addr, 2*time.Second)
	if err != nil {
		return "unreachable: " + err.Error()
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var v string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return "no answer: " + err.Error()
	}
	if num, _, ok := strings.Cut(v, "-MariaDB"); ok {
		return "mariadb " + num
	}
	num, _, _ := strings.Cut(v, "-")
	return "mysql " + num
}
