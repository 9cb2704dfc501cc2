package redlock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/internal/serverkind"
)

func init() {
	impl.Register(impl.Driver{
		Name:        "redlock",
		Recipe:      "Redlock as redis.io describes it",
		Description: "Redlock over independent Redis masters: SET NX PX on each, majority and validity, polling with jitter",
		Needs:       []impl.Need{Masters},
		Options:     []impl.Option{ModeOption, TimeoutOption},
		Caps:        impl.LeaseTTL | impl.Quorum | impl.Renewal,
		Wait:        redis.PollWait,
		New:         New,
		Validate:    ValidateTimeout,
		Residue:     Residue,
	})
}

// Masters are the independent Redis masters Redlock runs on (--redlock,
// LOCKBENCH_REDLOCK): five by default, as Redlock is described.
var Masters = impl.Need{Role: "redlock", Kind: serverkind.Redis, Count: 5,
	Usage: "Redlock masters, comma-separated: an odd number ≥ 3", Check: CheckMasters,
	Fence: redis.Fence, Guard: redis.Guard} // on the first master alone: Redlock offers no token of its own

// Options of the Redlock client; redsync takes TimeoutOption too.
var (
	ModeOption = impl.ChoiceOption(OptMode, ModeParallel,
		"Redlock: ask the masters in parallel, or sequential (in turn, as first described)", ModeParallel, ModeSequential)
	TimeoutOption = impl.DurationOption(OptTimeout, DefaultTimeout, time.Microsecond,
		"Redlock: bound on each master's reply, far below --ttl")
)

// ValidateTimeout refuses a per-master timeout that is not below the TTL:
// one master's reply may not cost the whole validity.
func ValidateTimeout(cfg impl.Config) error {
	cfg = cfg.WithDefaults()
	if t := cfg.Duration(TimeoutOption); t >= cfg.TTL {
		return fmt.Errorf("--%s (%v) must be below --ttl (%v): a master's reply may not cost the whole validity", OptTimeout, t, cfg.TTL)
	}
	return nil
}

// Keys of impl.Config.Options read by New.
const (
	// OptMode is "parallel" (ask all masters at once, the default) or
	// "sequential" (ask them in turn).
	OptMode = "redlock-mode"
	// OptTimeout bounds each master's reply, as a time.ParseDuration
	// string. Default DefaultTimeout.
	OptTimeout = "redlock-timeout"
)

// Values of OptMode.
const (
	ModeParallel   = "parallel"
	ModeSequential = "sequential"
)

// DefaultTimeout bounds one master's reply when OptTimeout is unset. It is
// far below the TTL so that a dead master costs little of the validity.
const DefaultTimeout = 50 * time.Millisecond

// driftFixed is added to TTL/100 as the clock-drift allowance.
const driftFixed = 2 * time.Millisecond

// Locker is one Redlock client: one connection to each master.
type Locker struct {
	cfg        impl.Config
	addrs      []string
	cls        []*redis.Conn // one per master, each a dedicated connection
	quorum     int
	timeout    time.Duration
	sequential bool
	drift      time.Duration

	counters impl.Counters
	stats    *Stats
	rng      *rand.Rand
	timer    *time.Timer
	asleep   atomic.Bool // between polls, for Settled
	res      []result    // per master, reused by every round
}

// result is one master's answer in a round.
type result struct {
	ok  bool // SET NX said OK, or the release script deleted the key
	err error
}

// New connects one client to every master of the Masters role.
func New(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
	cfg = cfg.WithDefaults()
	addrs := cfg.Servers[Masters.Role]
	if err := CheckMasters(addrs); err != nil {
		return nil, err
	}
	l := &Locker{
		cfg:     cfg,
		addrs:   addrs,
		quorum:  len(addrs)/2 + 1,
		timeout: cfg.Duration(TimeoutOption),
		drift:   cfg.TTL/100 + driftFixed,
		stats:   NewStats(len(addrs)),
		rng:     rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Client))),
		timer:   time.NewTimer(time.Hour),
		res:     make([]result, len(addrs)),
	}
	l.timer.Stop()
	if err := impl.CheckOptions([]impl.Option{ModeOption, TimeoutOption}, cfg.Options); err != nil {
		return nil, fmt.Errorf("redlock: %w", err)
	}
	l.sequential = cfg.Option(ModeOption) == ModeSequential
	cls, err := DialMasters(ctx, addrs, cfg, &l.counters)
	if err != nil {
		return nil, err
	}
	l.cls = make([]*redis.Conn, len(cls))
	for i, cl := range cls {
		l.cls[i] = redis.NewConn(cl)
	}
	return l, nil
}

// Acquire runs Redlock attempts until one is granted, until fewer than a
// majority of masters answer (an error wrapping impl.ErrNoQuorum), or
// until ctx is done.
func (l *Locker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	key := redis.Key(l.cfg.Namespace, name)
	token := redis.Token()
	set := func(ctx context.Context, cl *redis.Conn) (bool, error) {
		return cl.SetNX(ctx, key, token, l.cfg.TTL).Result()
	}
	for {
		start := time.Now()
		l.round(ctx, !l.sequential, l.timeout, set)
		validity := l.cfg.TTL - time.Since(start) - l.drift
		granted, reachable := 0, 0
		for _, r := range l.res {
			if r.err == nil {
				reachable++
				if r.ok {
					granted++
				}
			}
		}
		measured := !impl.IsWarmingUp(ctx)
		if granted >= l.quorum && validity > 0 {
			if measured {
				l.stats.MastersGranted[granted].Add(1)
				l.stats.recordValidity(validity)
			}
			return &lease{l: l, key: key, token: token}, nil
		}
		if impl.Expired(ctx) {
			// The masters' errors are ctx's, not theirs (their socket
			// deadline is ctx's, which can pass before ctx's timer marks
			// it done): count nothing, and undo the round for longer
			// than the per-master bound, since SETs that timed out on the
			// deadline may still land.
			l.cleanup(ctx, key, token)
			return nil, impl.CtxErr(ctx)
		}
		if measured {
			l.stats.MastersGranted[granted].Add(1)
		}
		if granted < l.quorum {
			l.counters.NoQuorum.Add(1)
			if granted > 0 {
				l.counters.SplitVotes.Add(1)
			}
		} else {
			l.counters.ValidityExpired.Add(1)
		}
		l.counters.Retries.Add(1)
		var fail error
		if reachable < l.quorum {
			fail = l.noQuorum(key, reachable) // before releaseAll reuses l.res
		}
		undone := l.releaseAll(ctx, key, token)
		if fail != nil {
			return nil, fail
		}
		if err := redis.Sleep(ctx, l.timer, redis.Backoff(l.rng, l.cfg.Retry, l.cfg.Jitter), &l.asleep); err != nil {
			if !undone {
				// No later round will undo what this one's undo missed.
				l.cleanup(ctx, key, token)
			}
			return nil, err
		}
	}
}

// round runs op on every master, each bounded by timeout, and leaves the
// answers in l.res. In turn, each master gets its own timeout; at once,
// they share one deadline (the same bound, one timer instead of M) and the
// calling goroutine asks the first master itself.
func (l *Locker) round(ctx context.Context, parallel bool, timeout time.Duration, op func(context.Context, *redis.Conn) (bool, error)) {
	if !parallel {
		for i, cl := range l.cls {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			ok, err := op(ctx, cl)
			cancel()
			l.res[i] = result{ok: ok, err: err}
		}
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var wg sync.WaitGroup
	for i := 1; i < len(l.cls); i++ {
		wg.Go(func() {
			ok, err := op(ctx, l.cls[i])
			l.res[i] = result{ok: ok, err: err}
		})
	}
	ok, err := op(ctx, l.cls[0])
	l.res[0] = result{ok: ok, err: err}
	wg.Wait()
}

// release is the compare-and-delete on one master.
func release(key, token string) func(context.Context, *redis.Conn) (bool, error) {
	return func(ctx context.Context, cl *redis.Conn) (bool, error) {
		n, err := redis.ReleaseScript.Run(ctx, cl, []string{key}, token).Int64()
		return n == 1, err
	}
}

// releaseAll undoes a failed attempt on every master, including those that
// timed out (their SET may have landed), before the next attempt, and
// reports whether every master answered. It runs on ctx's values but not
// its end, bounded by the per-master timeout: ctx may end while it runs,
// and the undo must still reach every master.
func (l *Locker) releaseAll(ctx context.Context, key, token string) bool {
	l.round(context.WithoutCancel(ctx), true, l.timeout, release(key, token))
	for _, r := range l.res {
		if r.err != nil {
			return false
		}
	}
	return true
}

// cleanup undoes the last attempt of an Acquire that ends because ctx
// did, on every master. Nothing comes after it to catch what it misses, so
// it is bounded by redis.CleanupTimeout rather than the per-master timeout,
// which a loaded machine can exceed: a key it missed would stay held, by
// nobody, for the whole TTL.
func (l *Locker) cleanup(ctx context.Context, key, token string) {
	l.round(context.WithoutCancel(ctx), true, redis.CleanupTimeout, release(key, token))
}

// noQuorum describes an attempt in which too few masters answered.
func (l *Locker) noQuorum(key string, reachable int) error {
	return fmt.Errorf("redlock: %s: %d of %d masters reachable, %d needed: %w: %w",
		key, reachable, len(l.cls), l.quorum, impl.ErrNoQuorum, l.nodeErrors())
}

// nodeErrors joins the errors in l.res as *impl.NodeError values. A master
// that refused the connection is marked impl.ErrUnreachable.
func (l *Locker) nodeErrors() error {
	var errs []error
	for i, r := range l.res {
		if r.err == nil {
			continue
		}
		err := r.err
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			err = fmt.Errorf("%w: %w", impl.ErrUnreachable, err)
		}
		errs = append(errs, &impl.NodeError{Node: i, Addr: l.addrs[i], Err: err})
	}
	return errors.Join(errs...)
}

// Settled reports whether the client is asleep between polls.
func (l *Locker) Settled() bool { return l.asleep.Load() }

// Counters returns this client's counters.
func (l *Locker) Counters() *impl.Counters { return &l.counters }

// RedlockStats returns this client's distributions; see Stats for when
// they may be read.
func (l *Locker) RedlockStats() *Stats { return l.stats }

// Close closes the connections to every master.
func (l *Locker) Close() error {
	var errs []error
	for _, cl := range l.cls {
		errs = append(errs, cl.Close())
	}
	return errors.Join(errs...)
}

type lease struct {
	l     *Locker
	key   string
	token string
}

func (s *lease) Fence() (uint64, bool) { return 0, false }

// Release deletes the key on every master at once. The lock counts as
// lost when fewer than a majority still held our token. A release cut short
// by ctx's end (the masters' requests time out on its deadline) is not a
// lost lock: it returns an error wrapping ctx.Err() and counts nothing.
func (s *lease) Release(ctx context.Context) error {
	l := s.l
	l.round(ctx, true, l.timeout, release(s.key, s.token))
	deleted := 0
	for _, r := range l.res {
		if r.ok {
			deleted++
		}
	}
	if deleted >= l.quorum {
		return nil
	}
	if impl.Expired(ctx) {
		return fmt.Errorf("redlock: %s: deleted on %d of %d masters when the release was cut short: %w", s.key, deleted, len(l.cls), impl.CtxErr(ctx))
	}
	l.counters.Lost.Add(1)
	err := fmt.Errorf("redlock: %s: deleted on %d of %d masters, %d needed: %w",
		s.key, deleted, len(l.cls), l.quorum, impl.ErrLockLost)
	if nerr := l.nodeErrors(); nerr != nil {
		err = fmt.Errorf("%w\n%w", err, nerr)
	}
	return err
}

// Renew extends the key on every master at once, each only where it still
// holds our token, as redsync's Extend does. The lease stays ours when a
// majority extended it within its validity (the TTL less the renewal's
// time and the drift allowance); otherwise the holder cannot show a
// majority and has lost the lock.
func (s *lease) Renew(ctx context.Context) error {
	l := s.l
	start := time.Now()
	ttl := l.cfg.TTL.Milliseconds()
	l.round(ctx, true, l.timeout, func(ctx context.Context, cl *redis.Conn) (bool, error) {
		n, err := redis.RenewScript.Run(ctx, cl, []string{s.key}, s.token, ttl).Int64()
		return n == 1, err
	})
	extended := 0
	for _, r := range l.res {
		if r.ok {
			extended++
		}
	}
	if extended >= l.quorum && l.cfg.TTL-time.Since(start)-l.drift > 0 {
		return nil
	}
	if impl.Expired(ctx) {
		return fmt.Errorf("redlock: %s: renewal cut short: %w", s.key, impl.CtxErr(ctx))
	}
	return fmt.Errorf("redlock: %s: extended on %d of %d masters, %d needed: %w",
		s.key, extended, len(l.cls), l.quorum, impl.ErrLockLost)
}

// Residue counts the keys a cell left under its namespace, summed over
// the masters.
func Residue(ctx context.Context, s impl.Servers, namespace string) (int, error) {
	total := 0
	for _, addr := range s[Masters.Role] {
		n, err := redis.Residue(ctx, impl.Servers{redis.Need.Role: {addr}}, namespace)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}
