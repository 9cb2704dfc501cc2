package rueidislock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/result"
)

// Module is the library this row calls.
const Module = "github.com/redis/rueidis"

func init() {
	impl.Register(impl.Driver{
		Name: "rueidislock",
		Description: "single Redis, rueidis's rueidislock with its defaults: 2×KeyMajority−1 keys, waiters sleep until a " +
			"client-side-caching invalidation (RESP3 CLIENT TRACKING) says a key changed; every tracking waiter is told",
		Library: Module,
		Needs:   []impl.Need{redis.Need},
		Options: []impl.Option{KeyValidity, TryNextAfter, KeyMajority, NoLoop},
		Caps:    impl.LeaseSession,
		Lease: func(cfg impl.Config) (time.Duration, string) {
			return cfg.Duration(KeyValidity), "KeyValidity"
		},
		// No Theory: Theory below is what a release would wake if it
		// invalidated each waiter once, not what it does. Waiters race for
		// 2×KeyMajority−1 keys, a winner short of a majority gives back
		// what it took, and every give-back invalidates every waiter
		// again, so a burst's count varies from run to run (2,007 to
		// 50,580 for 64 clients where the formula says 2,016); the herd
		// table shows the measured count without a ✓ it cannot earn.
		New:     New,
		Cleanup: Cleanup,
		Residue: Residue,
	})
}

// Theory is what tracking waiters predict: a release invalidates the first
// key in every waiter's cache, so every waiter wakes and tries again.
var Theory = result.Theory{Waiters: "all tracking (invalidations)", Formula: "n(n−1)/2", PerHandoffFormula: "n−1",
	Poly: [3]float64{0, -0.5, 0.5}}

// The library's settings, each with the library's default.
var (
	// KeyValidity is LockerOption.KeyValidity: how long a key lives
	// unless its holder extends it (every KeyValidity/2). The default is
	// 5s.
	KeyValidity = impl.DurationOption("rueidislock-key-validity", 5*time.Second, 10*time.Millisecond,
		"rueidislock's KeyValidity: a key lives this long unless its holder extends it (every half of it)")
	// TryNextAfter is LockerOption.TryNextAfter: the bound on each key's
	// acquire script. The default is 20ms.
	TryNextAfter = impl.DurationOption("rueidislock-try-next-after", 20*time.Millisecond, time.Millisecond,
		"rueidislock's TryNextAfter: how long one key's acquire may take before the next key is tried")
	// KeyMajority is LockerOption.KeyMajority: a lock is held with this
	// many of 2×KeyMajority−1 keys. The default is 2.
	KeyMajority = impl.IntOption("rueidislock-key-majority", 2, 1, 5,
		"rueidislock's KeyMajority: a lock is this many of 2×KeyMajority−1 keys")
	// NoLoop is LockerOption.NoLoopTracking: with NOLOOP a client is not
	// told of its own writes. The default is false.
	NoLoop = impl.ChoiceOption("rueidislock-noloop", "false",
		"rueidislock's NoLoopTracking: CLIENT TRACKING … NOLOOP (Redis ≥ 7.0.5)", "false", "true")
)

// keyPrefix is the library's default KeyPrefix, kept so that the keys are
// the ones its users see; cells are kept apart by the lock name.
const keyPrefix = "rueidislock"

// Locker is one client: one rueidislock.Locker over its own rueidis client.
type Locker struct {
	lk       rueidislock.Locker
	addr     string
	cfg      impl.Config
	counters impl.Counters

	// What the wrapped client sees of the Acquire in progress.
	waitKey  atomic.Pointer[string] // the lock's first key while an Acquire runs
	tries    atomic.Int64           // acquire scripts on it in this Acquire
	inflight atomic.Int64           // commands sent and not yet answered
	pending  atomic.Bool            // an invalidation of the lock came after the last try
}

// New connects one client: a rueidislock.Locker whose rueidis client has
// its connection, tracking on, and the library's scripts loaded before it
// returns.
func New(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
	cfg = cfg.WithDefaults()
	addrs := cfg.Servers[redis.Need.Role]
	if len(addrs) == 0 {
		return nil, errors.New("rueidislock: no server address")
	}
	l := &Locker{addr: addrs[0], cfg: cfg}
	lk, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption: rueidis.ClientOption{
			InitAddress:  []string{l.addr},
			Dialer:       net.Dialer{Timeout: cfg.DialTimeout},
			DisableRetry: true, // an error is reported once, as it happened
		},
		KeyValidity:    cfg.Duration(KeyValidity),
		TryNextAfter:   cfg.Duration(TryNextAfter),
		KeyMajority:    int32(cfg.Int(KeyMajority)),
		NoLoopTracking: cfg.Option(NoLoop) == "true",
		ClientBuilder:  l.build,
	})
	if err != nil {
		return nil, redis.Classify(l.addr, fmt.Errorf("%w: %w", impl.ErrUnreachable, err))
	}
	l.lk = lk
	if err := l.warm(ctx); err != nil {
		lk.Close()
		return nil, err
	}
	return l, nil
}

// warm takes and releases a lock of its own once, so that the library's
// acquire and delete scripts are loaded (a first EVALSHA answers NOSCRIPT
// and is sent again as EVAL) before any measurement, then zeroes what it
// counted.
func (l *Locker) warm(ctx context.Context) error {
	dctx, cancel := context.WithTimeout(ctx, l.cfg.DialTimeout)
	defer cancel()
	probe := redis.Key(l.cfg.Namespace, "rueidislock-probe:"+strconv.Itoa(l.cfg.Client))
	// Each key's script is bounded by TryNextAfter (20 ms): on a loaded
	// machine the first, which loads the script, may take longer.
	for {
		_, release, err := l.lk.TryWithContext(context.WithoutCancel(dctx), probe)
		if err == nil {
			release()
			break
		}
		if dctx.Err() != nil {
			return fmt.Errorf("rueidislock %s: first lock: %w", l.addr, err)
		}
		time.Sleep(time.Millisecond)
	}
	if err := l.lk.Client().Do(dctx, l.lk.Client().B().Ping().Build()).Error(); err != nil {
		return redis.Classify(l.addr, err)
	}
	l.counters.RoundTrips.Store(0)
	l.counters.Notifications.Store(0)
	return nil
}

// Acquire is the library's WithContext. Its lock lives as long as the
// context it was given, so it gets one that outlives this call and is
// cancelled by ctx's end only until the lock is granted: the caller's
// deadline bounds the wait, not the hold. A grant that comes as ctx ends
// is given back.
func (l *Locker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	key := redis.Key(l.cfg.Namespace, name)
	first := keyPrefix + ":0:" + key
	l.tries.Store(0)
	l.pending.Store(false)
	l.waitKey.Store(&first)
	defer l.waitKey.Store(nil)

	hold, stop := context.WithCancel(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(ctx, stop)
	lockCtx, release, err := l.lk.WithContext(hold, key)
	waiting := unhook() // false: ctx ended and stop ran
	granted := err == nil && waiting
	l.account(granted)
	switch {
	case err == nil && !waiting:
		release()
		return nil, impl.CtxErr(ctx)
	case err != nil && ctx.Err() != nil:
		stop()
		return nil, impl.CtxErr(ctx)
	case err != nil:
		stop()
		return nil, fmt.Errorf("rueidislock %s: %s: %w", l.addr, key, err)
	}
	return &lease{l: l, key: key, held: lockCtx, release: release, stop: stop}, nil
}

// account counts an Acquire's failed tries as retries, and every wake-up
// (each try after the first, counted as it was sent) that did not end in
// the grant as wasted.
func (l *Locker) account(granted bool) {
	tries := l.tries.Load()
	failed := tries
	if granted {
		failed--
	}
	l.counters.Retries.Add(max(failed, 0))
	if wakeups := tries - 1; wakeups > 0 {
		if granted {
			wakeups--
		}
		l.counters.WastedWakeups.Add(wakeups)
	}
}

// Settled reports whether an Acquire is asleep in the library: it has
// tried, nothing it sent is unanswered, and no invalidation of the lock
// came after its last try.
func (l *Locker) Settled() bool {
	return l.waitKey.Load() != nil && l.tries.Load() > 0 && l.inflight.Load() == 0 && !l.pending.Load()
}

// Counters returns this client's counters.
func (l *Locker) Counters() *impl.Counters { return &l.counters }

// Close closes the library's Locker and its client; keys it holds stay
// until KeyValidity passes.
func (l *Locker) Close() error {
	l.lk.Close()
	return nil
}

type lease struct {
	l       *Locker
	key     string
	held    context.Context // the library's: done once the lock is lost
	release context.CancelFunc
	stop    context.CancelFunc
	done    bool
}

func (s *lease) Fence() (uint64, bool) { return 0, false }

// Release is the library's cancel func, which deletes the keys and waits
// for that. A lock the library had already seen lost (its context done:
// an extension found a key gone or taken) wraps impl.ErrLockLost.
func (s *lease) Release(context.Context) error {
	if s.done {
		return fmt.Errorf("rueidislock %s: %s: lease released twice", s.l.addr, s.key)
	}
	s.done = true
	lost := s.held.Err() != nil
	s.release()
	s.stop()
	if lost {
		s.l.counters.Lost.Add(1)
		return fmt.Errorf("rueidislock %s: %s: %w", s.l.addr, s.key, impl.ErrLockLost)
	}
	return nil
}
