package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/report"
)

func init() {
	register("crash", runCrash, "redis", "redlock", "redsync", "zk-naive", "zk-pred")
	register("pause", runPause, "redis", "redlock", "zk-naive", "zk-pred")
	register("failover", runFailover, "redis", "redlock", "zk-naive", "zk-pred")
	register("restart", runRestart, "redlock")
	register("latency", runLatency) // every implementation
	register("partition", runPartition, "redlock", "redsync", "zk-naive", "zk-pred")
}

// appliesTo lists, per scenario, the implementations it applies to; nil
// means every one.
var appliesTo = map[string][]string{}

// Impls returns the implementations a fault scenario applies to, or nil
// when it applies to every implementation (or is not a fault scenario).
func Impls(scenario string) []string { return slices.Clone(appliesTo[scenario]) }

// Options keys read from impl.Config.Options (the CLI sets them).
const (
	// OptNetDelay is the delay the latency proxies add each way, as a
	// time.ParseDuration string. Default DefaultNetDelay.
	OptNetDelay = "net-delay"
	// OptNetJitter is the uniform ± added to OptNetDelay. Default 0.
	OptNetJitter = "net-jitter"
	// OptRestartDelay is how long a restarted Redlock master stays out
	// (restart). Default 0: it comes back at once.
	OptRestartDelay = "redlock-restart-delay"
)

// DefaultNetDelay is the latency scenario's delay when OptNetDelay is unset.
const DefaultNetDelay = time.Millisecond

// setupTimeout bounds starting servers and connecting clients.
const setupTimeout = 30 * time.Second

type runner func(ctx context.Context, spec lockbench.CellSpec, d impl.Driver) (report.Cell, error)

func register(name string, run runner, impls ...string) {
	appliesTo[name] = impls
	lockbench.RegisterFault(name, func(ctx context.Context, spec lockbench.CellSpec) (report.Cell, error) {
		if len(impls) > 0 && !slices.Contains(impls, spec.Impl) {
			return report.Cell{}, fmt.Errorf("%w: scenario %s applies to %s, not to %q",
				lockbench.ErrNotApplicable, name, strings.Join(impls, ", "), spec.Impl)
		}
		d, ok := impl.Lookup(spec.Impl)
		if !ok {
			return report.Cell{}, fmt.Errorf("%w: unknown implementation %q", lockbench.ErrUsage, spec.Impl)
		}
		spec.Scenario.Name = name
		spec.Repeat = max(spec.Repeat, 1)
		spec.Clients = max(spec.Clients, 1)
		spec.Config = spec.Config.WithDefaults()
		if spec.Config.Namespace == "" {
			spec.Config.Namespace = fmt.Sprintf("faults-%d", time.Now().UnixNano())
		}
		if spec.MaxTime > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, spec.MaxTime)
			defer cancel()
		}
		return run(ctx, spec, d)
	})
}

// family is the kind of servers an implementation uses.
type family int

const (
	famNone    family = iota
	famRedis          // one Redis
	famRedlock        // independent Redis masters
	famZK             // a ZooKeeper ensemble
)

func familyOf(d impl.Driver) family {
	switch {
	case d.Needs.Redlock > 0:
		return famRedlock
	case d.Needs.Redis:
		return famRedis
	case d.Needs.ZK:
		return famZK
	}
	return famNone
}

// targets lists the servers of s that an implementation of family f uses.
func (f family) targets(s impl.Servers) []string {
	switch f {
	case famRedis:
		if s.Redis == "" {
			return nil
		}
		return []string{s.Redis}
	case famRedlock:
		return slices.Clone(s.Redlock)
	case famZK:
		return slices.Clone(s.ZK)
	}
	return nil
}

// with returns s with the family's servers replaced by addrs.
func (f family) with(s impl.Servers, addrs []string) impl.Servers {
	switch f {
	case famRedis:
		s.Redis = addrs[0]
	case famRedlock:
		s.Redlock = addrs
	case famZK:
		s.ZK = addrs
	}
	return s
}

// bound is what recovery from a dead holder is compared with: the TTL for
// the Redis locks, the session timeout for ZooKeeper.
func (f family) bound(c impl.Config) time.Duration {
	if f == famZK {
		return c.SessionTimeout
	}
	return c.TTL
}

func (f family) boundName() string {
	if f == famZK {
		return "session timeout"
	}
	return "TTL"
}

func needServers(spec lockbench.CellSpec, f family) error {
	if len(f.targets(spec.Config.Servers)) == 0 {
		return fmt.Errorf("%w: %s %s: no server address for %s", lockbench.ErrUsage, spec.Scenario.Name, spec.Impl, spec.Impl)
	}
	return nil
}

// dial connects one client with its own index (its own token stream).
func dial(ctx context.Context, d impl.Driver, cfg impl.Config, servers impl.Servers, client int) (impl.Locker, error) {
	cfg.Servers = servers
	cfg.Client = client
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	l, err := d.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("faults: %s client %d: %w", d.Name, client, err)
	}
	return l, nil
}

// prepare creates per-lock server state (ZooKeeper's parents) up front.
func prepare(ctx context.Context, l impl.Locker, name string) error {
	if p, ok := l.(impl.Preparer); ok {
		return p.Prepare(ctx, []string{name})
	}
	return nil
}

// lockName is the lock a repeat uses: a fresh one per repeat, so that no
// repeat sees another's leftovers.
func lockName(scenario string, repeat int) string { return fmt.Sprintf("%s-%d", scenario, repeat) }

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// settle waits, at most max, until every waiter is queued or asleep
// between polls, so that a fault lands on waiters that are waiting.
func settle(ctx context.Context, max time.Duration, ls ...impl.Locker) {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		all := true
		for _, l := range ls {
			if s, ok := l.(impl.Settler); ok && !s.Settled() {
				all = false
			}
		}
		if all {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// releaseTimeout bounds one Release: a client cut off or whose server died
// may otherwise wait for a reconnect.
const releaseTimeout = 5 * time.Second

// release gives lease back within releaseTimeout. Like the harness, it
// counts a lost lease (the implementation counted it in Lost) as no error.
func release(ctx context.Context, t *tally, lease impl.Lease) error {
	err := releaseBounded(ctx, lease)
	if err != nil && !errors.Is(err, impl.ErrLockLost) {
		t.failed(err)
	}
	return err
}

// releaseScripted is release for a holder whose server the script killed
// or cut: its failure is the script's doing, counted under detail key.
func releaseScripted(ctx context.Context, t *tally, lease impl.Lease, key string) {
	if err := releaseBounded(ctx, lease); err != nil && !errors.Is(err, impl.ErrLockLost) {
		t.add(key, 1)
	}
}

func releaseBounded(ctx context.Context, lease impl.Lease) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- lease.Release(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		// Close unblocks the Release; it is not waited for.
		return fmt.Errorf("faults: release: %w", ctx.Err())
	}
}

// first is the first holder's Acquire, on a lock nobody holds yet: it
// must succeed within setupTimeout, or the scenario cannot go on.
func first(ctx context.Context, t *tally, l impl.Locker, name string) (impl.Lease, time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	start := time.Now()
	lease, err := l.Acquire(ctx, name)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("faults: first holder: %w", err)
	}
	got := time.Now()
	t.acquired(got.Sub(start))
	return lease, got, nil
}

// acquire is a waiter's Acquire: it asks again after an error (a waiter
// wants the lock, and one slow reply must not end the scenario), counting
// every error, until it holds the lock or ctx is done. The latency
// recorded runs from the first call.
func acquire(ctx context.Context, t *tally, l impl.Locker, name string, retry time.Duration) (impl.Lease, time.Time, error) {
	start := time.Now()
	for {
		lease, err := l.Acquire(ctx, name)
		if err == nil {
			got := time.Now()
			t.acquired(got.Sub(start))
			return lease, got, nil
		}
		if ctx.Err() != nil {
			t.failed(err)
			return nil, time.Time{}, err
		}
		t.failed(err)
		if err := sleep(ctx, retry); err != nil {
			return nil, time.Time{}, err
		}
	}
}

// closeAll adds the clients' counters to t and closes them.
func closeAll(t *tally, ls ...impl.Locker) {
	for _, l := range ls {
		if l == nil {
			continue
		}
		t.count(l.Counters().Snapshot())
		l.Close()
	}
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fmtDur prints a measured duration for a verdict: 2.04s, 850ms, 12.5ms,
// 2.43ms. Configured ones print as time.Duration does (2s).
func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= 100*time.Millisecond:
		return fmt.Sprintf("%.0fms", ms(d))
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.1fms", ms(d))
	case d > 0:
		return fmt.Sprintf("%.2fms", ms(d))
	}
	return "0"
}

func fmtMs(v float64) string { return fmtDur(time.Duration(v * float64(time.Millisecond))) }

// optDuration reads a duration option; absent or empty gives def.
func optDuration(c impl.Config, key string, def time.Duration) (time.Duration, error) {
	s := c.Options[key]
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: option %s=%q: want a duration ≥ 0", lockbench.ErrUsage, key, s)
	}
	return d, nil
}

func plural(n int64, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
