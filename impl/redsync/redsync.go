package redsync

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	rsgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/impl/redlock"
)

func init() {
	impl.Register(impl.Driver{
		Name: "redsync",
		Description: "go-redsync/redsync's NewMutex(name) over the Redlock masters, with redsync's defaults " +
			"(32 tries 50–250 ms apart, 8 s expiry) unless --redsync-* say otherwise (library peer of redlock)",
		Library: Module,
		Needs:   []impl.Need{redlock.Masters},
		Options: options,
		Caps:    impl.LeaseTTL | impl.Quorum | impl.Renewal,
		New:     New,
		Residue: redlock.Residue,
	})
}

// Locker is one redsync client: one connection to each master.
type Locker struct {
	cfg    impl.Config
	addrs  []string
	cls    []*goredis.Client
	rs     *redsync.Redsync
	opts   []redsync.Option
	quorum int
	set    settings

	counters impl.Counters
	rng      *rand.Rand  // tokens and delays; used only inside LockContext's goroutine
	asleep   atomic.Bool // between tries, for Settled

	// State of the Acquire in progress. redsync asks the masters from
	// goroutines of its own, but waits for all of them before it calls the
	// delay func, and that func runs before it starts the next try; so the
	// per-master slots need no lock.
	key      string
	value    string // redsync's value of the last try, seen by node 0's SetNX
	actx     context.Context
	fail     context.CancelCauseFunc
	triedOK  []bool
	triedErr []error
}

// New connects one client to every master of Redlock's masters role.
func New(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
	cfg = cfg.WithDefaults()
	addrs := cfg.Servers[redlock.Masters.Role]
	if err := redlock.CheckMasters(addrs); err != nil {
		return nil, fmt.Errorf("redsync: %w", err)
	}
	l := &Locker{
		cfg:      cfg,
		addrs:    addrs,
		quorum:   len(addrs)/2 + 1,
		rng:      rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Client))),
		triedOK:  make([]bool, len(addrs)),
		triedErr: make([]error, len(addrs)),
	}
	cls, err := redlock.DialMasters(ctx, addrs, cfg, &l.counters)
	if err != nil {
		return nil, fmt.Errorf("redsync: %w", err)
	}
	l.cls = cls
	pools := make([]rsredis.Pool, len(cls))
	for i, cl := range cls {
		pools[i] = pool{Pool: rsgoredis.NewPool(cl), l: l, node: i}
	}
	l.rs = redsync.New(pools...)
	// redsync's defaults, but for the options the user changed, and the
	// retry delay: redsync's default draw, made here so that each failed
	// try is seen (see delay).
	l.set = readSettings(cfg)
	l.opts = append(slices.Clone(l.set.changed), redsync.WithRetryDelayFunc(l.delay))
	// redsync's delete script is loaded by its first use (EVALSHA, then
	// EVAL on NOSCRIPT); use it now so that the load stays out of the cell.
	probe := l.rs.NewMutex(redis.Key(cfg.Namespace, "redsync-probe"), redsync.WithValue(redis.Token()))
	probe.UnlockContext(ctx)
	if err := ctx.Err(); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Acquire runs redsync's LockContext until it is granted, until a try finds
// fewer than a majority of masters answering (an error wrapping
// impl.ErrNoQuorum), or until ctx is done.
func (l *Locker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	key := redis.Key(l.cfg.Namespace, name)
	m := l.rs.NewMutex(key, l.opts...)
	actx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	l.key, l.value, l.actx, l.fail = key, "", actx, fail
	l.resetTry()
	err := m.LockContext(actx)
	l.asleep.Store(false)
	if err == nil {
		return &lease{l: l, m: m}, nil
	}
	if cause := context.Cause(actx); errors.Is(cause, impl.ErrNoQuorum) {
		return nil, cause // redsync has already undone the try
	}
	if impl.Expired(ctx) {
		l.cleanup(ctx, key, l.value)
		return nil, impl.CtxErr(ctx)
	}
	return nil, fmt.Errorf("redsync: %s: %w", key, err)
}

// cleanup deletes, on every master, the keys of an Acquire that ends
// because ctx did. redsync undoes a failed try with the ctx it was given,
// bounded by the per-master timeout: once ctx has expired that undo fails
// at once, and a loaded machine can exceed the bound anyway, so a try's
// keys (up to one per master) would stay held, by nobody, for the TTL.
// The deletion here outlives ctx, bounded by redis.CleanupTimeout, and
// deletes only this Acquire's value (redsync's own, drawn per try, seen as
// it is sent).
func (l *Locker) cleanup(ctx context.Context, key, value string) {
	if value == "" {
		return
	}
	cctx, cancel := redis.Uncancelled(ctx)
	defer cancel()
	l.rs.NewMutex(key, redsync.WithValue(value)).UnlockContext(cctx)
}

// delay is redsync's retry delay func: redsync calls it after every try
// that did not get the lock, once it has undone the try on every master and
// before it sleeps. Counters.Retries therefore counts failed tries that
// redsync went on to retry, like package redlock's; NoQuorum and
// ValidityExpired say why each failed. A try that reached fewer than a
// majority of masters ends the Acquire: delay cancels LockContext's ctx
// with an impl.ErrNoQuorum cause and returns a long pause, so that
// redsync's wait sees the ctx done at once.
//
// A try cut short by the caller's ctx is neither counted nor a no-quorum:
// the masters' requests time out on ctx's deadline (go-redis's socket
// deadline), possibly before ctx's timer has marked it done, so delay
// looks at the deadline too (impl.Expired) and then ends LockContext for
// Acquire to clean up and return ctx.Err().
func (l *Locker) delay(int) time.Duration {
	if impl.Expired(l.actx) {
		l.fail(context.DeadlineExceeded) // nothing if actx is already done
		return time.Hour
	}
	granted, reachable := 0, 0
	for i, err := range l.triedErr {
		if err == nil {
			reachable++
			if l.triedOK[i] {
				granted++
			}
		}
	}
	if granted < l.quorum {
		l.counters.NoQuorum.Add(1)
	} else {
		l.counters.ValidityExpired.Add(1)
	}
	l.counters.Retries.Add(1)
	if reachable < l.quorum {
		l.fail(fmt.Errorf("redsync: %s: %d of %d masters reachable, %d needed: %w: %w",
			l.key, reachable, len(l.cls), l.quorum, impl.ErrNoQuorum, l.triedErrors()))
		return time.Hour
	}
	l.resetTry()
	l.asleep.Store(true)
	return l.set.delay(l.rng)
}

// triedErrors joins the last try's per-master errors as *impl.NodeError.
func (l *Locker) triedErrors() error {
	var errs []error
	for i, err := range l.triedErr {
		if err != nil {
			errs = append(errs, &impl.NodeError{Node: i, Addr: l.addrs[i], Err: err})
		}
	}
	return errors.Join(errs...)
}

// resetTry clears the per-master outcomes before a try.
func (l *Locker) resetTry() {
	clear(l.triedOK)
	clear(l.triedErr)
}

// Settled reports whether the client is asleep between tries.
func (l *Locker) Settled() bool { return l.asleep.Load() }

// Counters returns this client's counters.
func (l *Locker) Counters() *impl.Counters { return &l.counters }

// Close closes the connections to every master.
func (l *Locker) Close() error { return redlock.CloseMasters(l.cls) }

type lease struct {
	l *Locker
	m *redsync.Mutex
}

func (s *lease) Fence() (uint64, bool) { return 0, false }

// Release is redsync's UnlockContext. The lock counts as lost when fewer
// than a majority of masters still held our token. A release cut short by
// ctx's end (the masters' requests time out on its deadline) is not a lost
// lock: it returns an error wrapping ctx.Err() and counts nothing.
func (s *lease) Release(ctx context.Context) error {
	ok, err := s.m.UnlockContext(ctx)
	if ok {
		return nil
	}
	if impl.Expired(ctx) {
		return fmt.Errorf("redsync: %s: release cut short: %w", s.m.Name(), impl.CtxErr(ctx))
	}
	s.l.counters.Lost.Add(1)
	lost := fmt.Errorf("redsync: %s: %w", s.m.Name(), impl.ErrLockLost)
	if err != nil {
		return fmt.Errorf("%w: %w", lost, s.l.nodeErrors(err))
	}
	return lost
}

// Renew is redsync's ExtendContext: the key's TTL is set afresh on every
// master that still holds our token, and the lease stays ours when a
// majority did within its validity. Otherwise the lock is lost.
func (s *lease) Renew(ctx context.Context) error {
	ok, err := s.m.ExtendContext(ctx)
	if ok {
		return nil
	}
	if impl.Expired(ctx) {
		return fmt.Errorf("redsync: %s: renewal cut short: %w", s.m.Name(), impl.CtxErr(ctx))
	}
	lost := fmt.Errorf("redsync: %s: extend: %w", s.m.Name(), impl.ErrLockLost)
	if err != nil {
		return fmt.Errorf("%w: %w", lost, s.l.nodeErrors(err))
	}
	return lost
}

// nodeErrors rewrites the redsync.RedisError values in err (as joined by
// redsync) as *impl.NodeError, which name the master's address.
func (l *Locker) nodeErrors(err error) error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		var re redsync.RedisError
		if errors.As(e, &re) && re.Node >= 0 && re.Node < len(l.addrs) {
			e = &impl.NodeError{Node: re.Node, Addr: l.addrs[re.Node], Err: re.Err}
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

// pool hands redsync connections that report each SET NX outcome to the
// Locker, so that delay can tell why a try failed.
type pool struct {
	rsredis.Pool
	l    *Locker
	node int
}

func (p pool) Get(ctx context.Context) (rsredis.Conn, error) {
	p.l.asleep.Store(false) // a try or a release is starting
	c, err := p.Pool.Get(ctx)
	if err != nil {
		return nil, err
	}
	return conn{Conn: c, l: p.l, node: p.node}, nil
}

type conn struct {
	rsredis.Conn
	l    *Locker
	node int
}

func (c conn) SetNX(name, value string, expiry time.Duration) (bool, error) {
	ok, err := c.Conn.SetNX(name, value, expiry)
	c.l.triedOK[c.node], c.l.triedErr[c.node] = ok, err
	if c.node == 0 {
		c.l.value = value // the same on every master; one writer
	}
	return ok, err
}
