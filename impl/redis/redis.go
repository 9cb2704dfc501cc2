package redis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/serverkind"
)

func init() {
	// go-redis logs dial failures on its own; lockbench reports every
	// error once, classified, so the library's log would only repeat it.
	goredis.SetLogger(silent{})
	impl.Register(impl.Driver{
		Name:        "redis",
		Recipe:      "the single-instance Redis lock (SET NX PX, compare-and-delete)",
		Description: "single Redis: SET NX PX, polling with jitter, Lua compare-and-delete",
		Needs:       []impl.Need{Need},
		Caps:        impl.LeaseTTL | impl.Renewal,
		Wait:        PollWait,
		New:         New,
		Residue:     Residue,
	})
}

// Need is the one Redis server the lock uses (--redis, LOCKBENCH_REDIS).
var Need = impl.Need{Role: "redis", Kind: serverkind.Redis, Count: 1, Usage: "Redis address for the single-instance lock",
	Fence: Fence, Guard: Guard}

// SubscribingNeed is Need for locks whose clients also subscribe (the
// Redisson locks): each holds a command and a subscription connection.
var SubscribingNeed = func() impl.Need { n := Need; n.Conns = 2; return n }()

// Locker is one client of the single-instance Redis lock.
type Locker struct {
	cl       *Conn
	addr     string
	cfg      impl.Config
	counters impl.Counters
	rng      *rand.Rand
	timer    *time.Timer
	asleep   atomic.Bool // between polls, for Settled
	// lastName and lastKey are the last lock name asked for and its key,
	// and keys that key as a script's KEYS: a client mostly asks for the
	// same lock again, and they would otherwise be built anew on every
	// cycle.
	lastName, lastKey string
	keys              []string
	// args is the release script's ARGV, filled for each release: the
	// client releases one lease at a time, and go-redis copies it.
	args []any
}

// New connects one client to the server of Need's role.
func New(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
	cfg = cfg.WithDefaults()
	addrs := cfg.Servers[Need.Role]
	if len(addrs) == 0 {
		return nil, fmt.Errorf("redis: no server address")
	}
	l := &Locker{
		addr:  addrs[0],
		cfg:   cfg,
		rng:   rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Client))),
		timer: time.NewTimer(time.Hour),
		args:  make([]any, 1),
	}
	l.timer.Stop()
	cl, err := DialConn(ctx, l.addr, cfg, &l.counters)
	if err != nil {
		return nil, err
	}
	l.cl = cl
	return l, nil
}

// Acquire polls SET NX PX until it succeeds or ctx is done.
func (l *Locker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	if name != l.lastName || l.lastKey == "" {
		l.lastName, l.lastKey = name, Key(l.cfg.Namespace, name)
		l.keys = []string{l.lastKey} // a new slice: a lease may keep the old
	}
	s := &lease{l: l, key: l.lastKey, keys: l.keys} // the one allocation: it holds the token
	s.tok.draw()
	for {
		ok, err := l.cl.SetNX(ctx, s.key, &s.tok, l.cfg.TTL).Result()
		if err != nil {
			return nil, l.failed(ctx, s.key, s.tok.String(), err)
		}
		if ok {
			return s, nil
		}
		l.counters.Retries.Add(1)
		if err := Sleep(ctx, l.timer, Backoff(l.rng, l.cfg.Retry, l.cfg.Jitter), &l.asleep); err != nil {
			return nil, err
		}
	}
}

// failed ends an Acquire whose SET NX returned err, and says why.
//
// A SET NX that may have reached the server without its reply reaching us
// may have granted the lock: it is undone (undo, with this attempt's
// token) before Acquire returns, or the key would stay held, by nobody,
// for the whole TTL. When ctx has expired, the error is ctx's, whatever
// the connection reported: go-redis's socket deadline is ctx's deadline,
// so it often reports an i/o timeout before ctx's timer has fired.
func (l *Locker) failed(ctx context.Context, key, token string, err error) error {
	if MayHaveLanded(err) {
		undo(ctx, l.cl, key, token)
	}
	if impl.Expired(ctx) {
		return impl.CtxErr(ctx)
	}
	return Classify(l.addr, err)
}

// Settled reports whether the client is asleep between polls.
func (l *Locker) Settled() bool { return l.asleep.Load() }

// Counters returns this client's counters.
func (l *Locker) Counters() *impl.Counters { return &l.counters }

// Close closes the connection.
func (l *Locker) Close() error { return l.cl.Close() }

type lease struct {
	l    *Locker
	key  string
	keys []string // []string{key}
	tok  token
}

func (s *lease) Fence() (uint64, bool) { return 0, false }

// Release runs the compare-and-delete. A release cut short by ctx's end
// returns an error wrapping ctx.Err(): it says nothing about the lease,
// which is neither lost nor known to be released.
func (s *lease) Release(ctx context.Context) error {
	s.l.args[0] = &s.tok
	n, err := ReleaseScript.Run(ctx, s.l.cl, s.keys, s.l.args...).Int64()
	s.l.args[0] = nil
	if err != nil {
		if impl.Expired(ctx) {
			return fmt.Errorf("redis %s: release %s: %w", s.l.addr, s.key, impl.CtxErr(ctx))
		}
		return Classify(s.l.addr, err)
	}
	if n == 0 {
		s.l.counters.Lost.Add(1)
		return fmt.Errorf("redis %s: key %s: %w", s.l.addr, s.key, impl.ErrLockLost)
	}
	return nil
}

// Renew extends the key's TTL, only while it still holds our token
// (RenewScript).
func (s *lease) Renew(ctx context.Context) error {
	n, err := RenewScript.Run(ctx, s.l.cl, []string{s.key}, &s.tok, s.l.cfg.TTL.Milliseconds()).Int64()
	if err != nil {
		if impl.Expired(ctx) {
			return fmt.Errorf("redis %s: renew %s: %w", s.l.addr, s.key, impl.CtxErr(ctx))
		}
		return Classify(s.l.addr, err)
	}
	if n == 0 {
		return fmt.Errorf("redis %s: renew %s: %w", s.l.addr, s.key, impl.ErrLockLost)
	}
	return nil
}

// PollWait is what a polling waiter waits for: its next attempt, --retry
// ± --jitter later.
func PollWait(cfg impl.Config) string {
	cfg = cfg.WithDefaults()
	return fmt.Sprintf("its next poll, %v ± %.0f%% later (--retry, --jitter)", cfg.Retry, 100*cfg.Jitter)
}

// Backoff returns d scaled by a random factor in [1−jitter, 1+jitter].
func Backoff(r *rand.Rand, d time.Duration, jitter float64) time.Duration {
	if jitter <= 0 {
		return d
	}
	f := 1 + jitter*(2*r.Float64()-1)
	return time.Duration(float64(d) * f)
}

// Sleep waits d on t, or until ctx is done. It marks asleep while waiting.
func Sleep(ctx context.Context, t *time.Timer, d time.Duration, asleep *atomic.Bool) error {
	t.Reset(d)
	asleep.Store(true)
	defer asleep.Store(false)
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		t.Stop()
		return ctx.Err()
	}
}

type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}
