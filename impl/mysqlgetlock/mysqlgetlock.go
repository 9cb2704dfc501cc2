package mysqlgetlock

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/dsn"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// Role is the server role the driver connects to: --mysql,
// LOCKBENCH_MYSQL.
const Role = "mysql"

func init() {
	impl.Register(impl.Driver{
		Name:        "mysql-getlock",
		Description: "MySQL/MariaDB GET_LOCK(name, timeout) waits in the server's queue, RELEASE_LOCK",
		Library:     "github.com/go-sql-driver/mysql",
		Needs: []impl.Need{{Role: Role, Kind: serverkind.MySQL,
			Usage: "MySQL or MariaDB server: host:port (user root, no password) or a go-sql-driver DSN (user:pw@tcp(host:3306)/db)",
			DSN: func(addr string) error {
				_, err := mysql.ParseDSN(addr)
				return err
			},
			Guard: Guard}},
		Theory: &impl.ServerQueue,
		// A grant is the connection's: it ends with it.
		Caps:    impl.LeaseConn,
		New:     func(ctx context.Context, cfg impl.Config) (impl.Locker, error) { return New(ctx, cfg) },
		Residue: Leftovers,
	})
}

// waitSeconds is GET_LOCK's timeout: a year, which is as good as none;
// MariaDB refuses MySQL's negative "no limit".
const waitSeconds = "31536000"

// settleGrace bounds the statements that undo a cancelled acquire.
const settleGrace = 2 * time.Second

// Locker is one client on a connection of its own.
type Locker struct {
	cfg      impl.Config
	addr     string
	db       *sql.DB
	conn     *sql.Conn
	lock     *sql.Stmt
	unlock   *sql.Stmt
	id       int64
	ctl      *control
	names    map[string]string
	counters impl.Counters
	waitFrom atomic.Int64
}

// open returns a pool for addr that keeps at most n connections.
func open(addr string, n int, dial time.Duration) (*sql.DB, error) {
	mc, err := mysql.ParseDSN(dsn.MySQL(addr))
	if err != nil {
		return nil, fmt.Errorf("mysqlgetlock: %s: %w", dsn.Redact(addr), err)
	}
	mc.Timeout = dial
	// The driver's logger would write "[mysql] … packets.go:58 unexpected
	// EOF" to stderr beside the error it returns, which is classified and
	// counted; stderr is lockbench's notes' and failures' alone.
	mc.Logger = &mysql.NopLogger{}
	c, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, fmt.Errorf("mysqlgetlock: %s: %w", dsn.Redact(addr), err)
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxLifetime(0)
	return db, nil
}

// New connects one client.
func New(ctx context.Context, cfg impl.Config) (*Locker, error) {
	cfg = cfg.WithDefaults()
	addrs := cfg.Servers[Role]
	if len(addrs) != 1 {
		return nil, fmt.Errorf("mysqlgetlock: want one MySQL server, got %d", len(addrs))
	}
	db, err := open(addrs[0], 1, cfg.DialTimeout)
	if err != nil {
		return nil, err
	}
	ctl, err := controlFor(addrs[0])
	if err != nil {
		db.Close()
		return nil, err
	}
	l := &Locker{cfg: cfg, addr: dsn.Redact(addrs[0]), db: db, ctl: ctl, names: map[string]string{}}
	if err := l.connect(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return l, nil
}

// connect pins a connection and prepares the two statements on it.
func (l *Locker) connect(outer context.Context) error {
	ctx, cancel := context.WithTimeout(outer, l.cfg.DialTimeout)
	defer cancel()
	c, err := l.db.Conn(ctx)
	if err == nil {
		err = c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&l.id)
		if err == nil {
			l.lock, err = c.PrepareContext(ctx, "SELECT GET_LOCK(?, "+waitSeconds+")")
		}
		if err == nil {
			l.unlock, err = c.PrepareContext(ctx, "SELECT RELEASE_LOCK(?)")
		}
		if err != nil {
			c.Raw(func(any) error { return driverBad })
			c.Close()
		}
	}
	if err != nil {
		if e := outer.Err(); e != nil {
			return e
		}
		if d, ok := outer.Deadline(); ok && !time.Now().Before(d) {
			return context.DeadlineExceeded // the dial's own deadline passed first
		}
		return fmt.Errorf("mysqlgetlock: %s: %w: %v", l.addr, impl.ErrUnreachable, err)
	}
	l.conn = c
	return nil
}

// driverBad, returned from Raw, makes database/sql discard the connection.
var driverBad = errors.New("mysqlgetlock: discard connection")

// lockName is the server's name for name in this client's namespace.
func (l *Locker) lockName(name string) string {
	n, ok := l.names[name]
	if !ok {
		n = LockName(l.cfg.Namespace, name)
		l.names[name] = n
	}
	return n
}

// Acquire waits in GET_LOCK until the lock is granted or ctx ends; then
// KILL QUERY takes the waiter out of the server's queue.
func (l *Locker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	if l.conn == nil {
		if err := l.connect(ctx); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	key := l.lockName(name)
	stop := l.killOnDone(ctx)
	l.waitFrom.Store(time.Now().UnixNano())
	l.counters.RoundTrips.Add(1)
	var got sql.NullInt64
	err := l.lock.QueryRowContext(context.Background(), key).Scan(&got)
	l.waitFrom.Store(0)
	killed := stop()
	switch {
	case err == nil && got.Valid && got.Int64 == 1 && ctx.Err() == nil:
		return &lease{l: l, key: key}, nil
	case killed || ctx.Err() != nil:
		l.undo(key)
		return nil, ctx.Err()
	case err != nil:
		l.lost(err)
		return nil, fmt.Errorf("mysqlgetlock: %s: %w: %v", l.addr, impl.ErrUnreachable, err)
	}
	return nil, fmt.Errorf("mysqlgetlock: %s: GET_LOCK(%q, "+waitSeconds+") answered %v", l.addr, key, got)
}

// killOnDone sends KILL QUERY for this client's connection if ctx ends
// before the returned stop is called, again until the statement returns;
// stop waits for the killing to end, so that no kill lands on a later
// statement, and reports whether one was sent.
func (l *Locker) killOnDone(ctx context.Context) (stop func() bool) {
	if ctx.Done() == nil {
		return func() bool { return false }
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var killed bool
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		killed = true
		// A KILL that arrives before the server has begun the GET_LOCK
		// finds nothing to interrupt and is forgotten: kill again, more
		// slowly, until the statement has returned.
		for wait := 20 * time.Millisecond; ; wait = min(2*wait, time.Second) {
			l.ctl.kill(l.id)
			select {
			case <-done:
				return
			case <-time.After(wait):
			}
		}
	}()
	return func() bool {
		close(done)
		wg.Wait()
		return killed
	}
}

// undo releases a grant that raced the cancel: RELEASE_LOCK of a lock
// this connection does not hold changes nothing. When the connection
// cannot say, it is dropped, which frees its locks.
func (l *Locker) undo(key string) {
	ctx, cancel := context.WithTimeout(context.Background(), settleGrace)
	defer cancel()
	l.counters.RoundTrips.Add(1)
	var r sql.NullInt64
	if err := l.unlock.QueryRowContext(ctx, key).Scan(&r); err != nil {
		l.lost(err)
	}
}

// lost drops a connection that failed: the next Acquire opens another.
func (l *Locker) lost(error) {
	if l.conn == nil {
		return
	}
	l.conn.Raw(func(any) error { return driverBad })
	l.conn.Close()
	l.conn = nil
}

// Settled reports whether the server lists this client's connection as
// waiting for a user lock, in a view taken after its GET_LOCK was sent.
func (l *Locker) Settled() bool {
	from := l.waitFrom.Load()
	return from != 0 && l.ctl.waiting(l.id, from)
}

// Counters returns this client's counters.
func (l *Locker) Counters() *impl.Counters { return &l.counters }

// Close closes the connection, which frees its locks.
func (l *Locker) Close() error {
	if l.conn != nil {
		l.conn.Close()
	}
	return l.db.Close()
}

type lease struct {
	l   *Locker
	key string
}

// Fence: GET_LOCK has no token.
func (s *lease) Fence() (uint64, bool) { return 0, false }

// Release calls RELEASE_LOCK: 1 released; 0 (held by another) or NULL
// (no such lock: the connection or the server restarted) wrap
// impl.ErrLockLost.
func (s *lease) Release(ctx context.Context) error {
	l := s.l
	if l.conn == nil {
		l.counters.Lost.Add(1)
		return fmt.Errorf("mysqlgetlock: %s: the connection ended: %w", l.addr, impl.ErrLockLost)
	}
	l.counters.RoundTrips.Add(1)
	var r sql.NullInt64
	if err := l.unlock.QueryRowContext(ctx, s.key).Scan(&r); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("mysqlgetlock: %s: release: %w", l.addr, ctx.Err())
		}
		l.lost(err)
		l.counters.Lost.Add(1)
		return fmt.Errorf("mysqlgetlock: %s: the connection ended: %w (%v)", l.addr, impl.ErrLockLost, err)
	}
	if !r.Valid || r.Int64 != 1 {
		l.counters.Lost.Add(1)
		return fmt.Errorf("mysqlgetlock: %s: RELEASE_LOCK(%q) = %s: %w", l.addr, s.key, nullText(r), impl.ErrLockLost)
	}
	return nil
}

func nullText(v sql.NullInt64) string {
	if !v.Valid {
		return "NULL"
	}
	return strconv.FormatInt(v.Int64, 10)
}
