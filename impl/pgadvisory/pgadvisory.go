package pgadvisory

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/dsn"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// Role is the server role the drivers connect to: --postgres,
// LOCKBENCH_POSTGRES.
const Role = "postgres"

// mode is how a driver takes the lock.
type mode int

const (
	modeBlock mode = iota // pg_advisory_lock
	modeTry               // pg_try_advisory_lock, polled
	modeXact              // pg_advisory_xact_lock in a transaction
)

var need = impl.Need{Role: Role, Kind: serverkind.Postgres,
	Usage: "PostgreSQL server: host:port (user postgres, database postgres) or a DSN (postgres://user:pw@host:5432/db, or host=… port=… user=…)",
	DSN: func(addr string) error {
		_, err := pgx.ParseConfig(addr)
		return err
	},
	Guard: Guard}

func init() {
	impl.Register(withMode(impl.Driver{Name: "pg-advisory",
		Description: "PostgreSQL session advisory lock: pg_advisory_lock waits in the server's queue, pg_advisory_unlock"}, modeBlock))
	impl.Register(withMode(impl.Driver{Name: "pg-try",
		Description: "PostgreSQL pg_try_advisory_lock polled every --retry ± --jitter, as job runners and ORMs do"}, modeTry))
	impl.Register(withMode(impl.Driver{Name: "pg-xact",
		Description: "PostgreSQL pg_advisory_xact_lock in a transaction, released by COMMIT, as migration tools do"}, modeXact))
}

// withMode completes a driver's declaration for mode: the waiting modes
// queue on the server (impl.ServerQueue); pg-try polls.
func withMode(d impl.Driver, m mode) impl.Driver {
	d.Needs = []impl.Need{need}
	d.Library = "github.com/jackc/pgx/v5"
	d.New = func(ctx context.Context, cfg impl.Config) (impl.Locker, error) { return New(ctx, cfg, m) }
	d.Residue = Leftovers
	// A grant is the session's: it ends with the connection.
	d.Caps = impl.LeaseConn
	if m != modeTry {
		d.Theory = &impl.ServerQueue
	}
	return d
}

// cancelGrace is how long a cancelled request may take to answer the
// cancel request before pgx drops the connection: long enough for a
// loaded server, short enough that a server that stopped answering does
// not hold a client up.
const cancelGrace = 2 * time.Second

// connConfig parses addr and makes ctx cancellation send PostgreSQL's
// cancel request rather than only drop the connection.
func connConfig(addr string, dial time.Duration) (*pgx.ConnConfig, error) {
	cc, err := pgx.ParseConfig(dsn.Postgres(addr))
	if err != nil {
		return nil, fmt.Errorf("pgadvisory: %s: %w", dsn.Redact(addr), err)
	}
	cc.ConnectTimeout = dial
	cc.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: cancelGrace}
	}
	return cc, nil
}

// Locker is one client on a connection of its own.
type Locker struct {
	mode     mode
	cfg      impl.Config
	cc       *pgx.ConnConfig
	addr     string
	conn     *pgx.Conn
	pid      uint32
	ns       int32
	obs      *observer
	counters impl.Counters
	rng      *rand.Rand
	timer    *time.Timer
	// waitFrom is when the current blocking request was sent (unix ns),
	// 0 when none is: Settled compares it with the observer's view.
	waitFrom atomic.Int64
	asleep   atomic.Bool // pg-try: between polls
}

// New connects one client.
func New(ctx context.Context, cfg impl.Config, m mode) (*Locker, error) {
	cfg = cfg.WithDefaults()
	addrs := cfg.Servers[Role]
	if len(addrs) != 1 {
		return nil, fmt.Errorf("pgadvisory: want one PostgreSQL server, got %d", len(addrs))
	}
	cc, err := connConfig(addrs[0], cfg.DialTimeout)
	if err != nil {
		return nil, err
	}
	l := &Locker{mode: m, cfg: cfg, cc: cc, addr: dsn.Redact(addrs[0]), ns: hash32(cfg.Namespace),
		rng: rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Client))), timer: time.NewTimer(time.Hour)}
	l.timer.Stop()
	if m != modeTry {
		l.obs = observerFor(addrs[0], cc)
	}
	return l, l.connect(ctx)
}

func (l *Locker) connect(outer context.Context) error {
	ctx, cancel := context.WithTimeout(outer, l.cfg.DialTimeout)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, l.cc)
	if err != nil {
		if e := ctxErr(outer); e != nil {
			return e
		}
		return fmt.Errorf("pgadvisory: %s: %w: %v", l.addr, impl.ErrUnreachable, err)
	}
	// Preparing here keeps pgx's first-use Parse round trip (and the
	// transaction the server counts for it) out of the measurement.
	for _, q := range statements[l.mode] {
		if _, err := c.Prepare(ctx, q, q); err != nil {
			c.Close(context.Background())
			if e := ctxErr(outer); e != nil {
				return e
			}
			return fmt.Errorf("pgadvisory: %s: prepare: %w", l.addr, err)
		}
	}
	// A backend publishes its counts when idle at most once a second:
	// flushing them now keeps the set-up out of the next reading of the
	// server's counters too (PostgreSQL 15 and later; older ones say no).
	c.Exec(ctx, "SELECT pg_stat_force_next_flush()", pgx.QueryExecModeSimpleProtocol)
	l.conn, l.pid = c, c.PgConn().PID()
	return nil
}

// The statements each mode sends, by their text: pgx runs a statement
// prepared under its own text as the prepared one.
const (
	sqlLock     = "SELECT pg_advisory_lock($1, $2)"
	sqlTryLock  = "SELECT pg_try_advisory_lock($1, $2)"
	sqlXactLock = "SELECT pg_advisory_xact_lock($1, $2)"
	sqlUnlock   = "SELECT pg_advisory_unlock($1, $2)"
)

var statements = map[mode][]string{
	modeBlock: {sqlLock, sqlUnlock},
	modeTry:   {sqlTryLock, sqlUnlock},
	modeXact:  {sqlXactLock, sqlUnlock},
}

// Acquire takes the lock as the driver's mode says. A connection lost
// earlier (a restarted server, a cancel that outlived cancelGrace) is
// opened again first.
func (l *Locker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	if l.conn == nil || l.conn.IsClosed() {
		if err := l.connect(ctx); err != nil {
			return nil, err
		}
	}
	key := hash32(name)
	switch l.mode {
	case modeTry:
		return l.poll(ctx, key)
	case modeXact:
		return l.inTransaction(ctx, key)
	}
	l.waitFrom.Store(time.Now().UnixNano())
	l.counters.RoundTrips.Add(1)
	_, err := l.conn.Exec(ctx, sqlLock, l.ns, key)
	l.waitFrom.Store(0)
	if err == nil && ctx.Err() == nil {
		return &lease{l: l, key: key}, nil
	}
	return nil, l.abandon(ctx, key, err)
}

// poll tries until the lock is free, sleeping --retry ± --jitter between
// tries.
func (l *Locker) poll(ctx context.Context, key int32) (impl.Lease, error) {
	for {
		var ok bool
		l.counters.RoundTrips.Add(1)
		err := l.conn.QueryRow(ctx, sqlTryLock, l.ns, key).Scan(&ok)
		switch {
		case err != nil || ctx.Err() != nil:
			return nil, l.abandon(ctx, key, err)
		case ok:
			return &lease{l: l, key: key}, nil
		}
		l.counters.Retries.Add(1)
		if err := l.sleep(ctx); err != nil {
			return nil, err
		}
	}
}

func (l *Locker) sleep(ctx context.Context) error {
	d := l.cfg.Retry
	if j := l.cfg.Jitter; j > 0 {
		d = time.Duration(float64(d) * (1 + j*(2*l.rng.Float64()-1)))
	}
	l.timer.Reset(d)
	l.asleep.Store(true)
	defer l.asleep.Store(false)
	select {
	case <-l.timer.C:
		return nil
	case <-ctx.Done():
		l.timer.Stop()
		return ctx.Err()
	}
}

// inTransaction opens a transaction and waits for the lock inside it, as
// pgx users write it: Begin, then the lock call on the transaction.
func (l *Locker) inTransaction(ctx context.Context, key int32) (impl.Lease, error) {
	l.counters.RoundTrips.Add(1)
	tx, err := l.conn.Begin(ctx)
	if err != nil {
		// A BEGIN the server ran but whose answer ctx cut off leaves
		// the session in a transaction: end it.
		if l.conn.PgConn().TxStatus() != 'I' {
			l.rollback()
		}
		return nil, l.failed(ctx, err)
	}
	l.waitFrom.Store(time.Now().UnixNano())
	l.counters.RoundTrips.Add(1)
	_, err = tx.Exec(ctx, sqlXactLock, l.ns, key)
	l.waitFrom.Store(0)
	if err == nil && ctx.Err() == nil {
		return &lease{l: l, key: key, tx: tx}, nil
	}
	// ROLLBACK ends the transaction and with it a grant that raced ctx.
	l.rollback()
	return nil, l.failed(ctx, err)
}

// rollback ends the session's transaction, or drops the connection (and
// the transaction with it) when that fails.
func (l *Locker) rollback() {
	if l.conn.IsClosed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
	defer cancel()
	l.counters.RoundTrips.Add(1)
	if _, err := l.conn.Exec(ctx, "ROLLBACK"); err != nil {
		l.drop()
	}
}

// abandon undoes what a failed or cancelled request may have left: a
// grant that raced the cancel is a session lock this client now holds, so
// it is unlocked (false, and a warning, when it was not granted). If that
// cannot be done the connection is dropped, which frees the session's
// locks on the server.
func (l *Locker) abandon(ctx context.Context, key int32, err error) error {
	if l.conn != nil && !l.conn.IsClosed() {
		uctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
		defer cancel()
		l.counters.RoundTrips.Add(1)
		if _, uerr := l.conn.Exec(uctx, sqlUnlock, l.ns, key); uerr != nil {
			l.drop()
		}
	}
	return l.failed(ctx, err)
}

// failed says why an acquire failed: ctx's own error once ctx is done,
// whatever the client library made of the cancel.
func (l *Locker) failed(ctx context.Context, err error) error {
	if e := ctxErr(ctx); e != nil {
		return e
	}
	if l.conn == nil || l.conn.IsClosed() || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("pgadvisory: %s: %w: %v", l.addr, impl.ErrUnreachable, err)
	}
	return fmt.Errorf("pgadvisory: %s: %w", l.addr, err)
}

// ctxErr is ctx's error, or context.DeadlineExceeded once its deadline
// has passed: a dial that honours the deadline itself may fail a moment
// before ctx's own timer marks it done.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// drop closes the connection without waiting for the server.
func (l *Locker) drop() {
	if l.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		l.conn.Close(ctx)
		cancel()
	}
}

// Settled reports, for the waiting drivers, whether the server lists this
// client's backend as waiting on an advisory lock in a view taken after
// the request was sent; for pg-try, whether it sleeps between polls.
func (l *Locker) Settled() bool {
	if l.mode == modeTry {
		return l.asleep.Load()
	}
	from := l.waitFrom.Load()
	return from != 0 && l.obs.Waiting(l.pid, from)
}

// Counters returns this client's counters.
func (l *Locker) Counters() *impl.Counters { return &l.counters }

// Close ends the session, which frees every lock it holds.
func (l *Locker) Close() error {
	if l.conn == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
	defer cancel()
	return l.conn.Close(ctx)
}

type lease struct {
	l   *Locker
	key int32
	tx  pgx.Tx // pg-xact: the transaction whose COMMIT releases
}

// Fence: advisory locks have no token.
func (s *lease) Fence() (uint64, bool) { return 0, false }

// Release unlocks (or commits the transaction). A lock the server no
// longer knows — its session ended, the server restarted — wraps
// impl.ErrLockLost.
func (s *lease) Release(ctx context.Context) error {
	l := s.l
	l.counters.RoundTrips.Add(1)
	if s.tx != nil {
		if err := s.tx.Commit(ctx); err != nil {
			return l.lost(ctx, err)
		}
		return nil
	}
	var ok bool
	if err := l.conn.QueryRow(ctx, sqlUnlock, l.ns, s.key).Scan(&ok); err != nil {
		return l.lost(ctx, err)
	}
	if !ok {
		l.counters.Lost.Add(1)
		return fmt.Errorf("pgadvisory: %s: unlock found the lock not held: %w", l.addr, impl.ErrLockLost)
	}
	return nil
}

// lost classes a failed release: ctx's end says nothing of the lock; a
// connection that failed took the session, and its locks, with it.
func (l *Locker) lost(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("pgadvisory: %s: release: %w", l.addr, ctx.Err())
	}
	if l.conn.IsClosed() {
		l.counters.Lost.Add(1)
		return fmt.Errorf("pgadvisory: %s: the session ended: %w (%v)", l.addr, impl.ErrLockLost, err)
	}
	return fmt.Errorf("pgadvisory: %s: release: %w", l.addr, err)
}

// hash32 is FNV-1a of s as a signed 32-bit key; it allocates nothing.
func hash32(s string) int32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return int32(h)
}
