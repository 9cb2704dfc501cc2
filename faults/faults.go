package faults

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

func init() {
	register(fault{name: "crash", applies: both(expiring, proxied), run: runCrash,
		description: "the holder dies without releasing (connection cut, no close); time until the next waiter acquires vs TTL / session timeout; a lock of the connection's: cut (RST) and silent"})
	register(fault{name: "pause", applies: both(pausable, proxied), run: runPause,
		options:     []impl.Option{PauseForOption},
		description: "the holder stalls past its TTL, another acquires, the stale holder writes: violations, and a fenced resource refusing the stale write; a lock of the connection's: the waiter's stall against --pause-for"})
	register(fault{name: "failover", applies: failsOver, run: runFailover,
		description: "the holder's server is lost after the grant (Redis: replica promoted without the key): does a second client get the lock too?"})
	register(fault{name: "restart", applies: restartable, run: runRestart,
		options:     []impl.Option{RestartDelayOption},
		description: "a Redlock master restarts empty right after a grant (with --redlock-restart-delay ≥ TTL it stays out until the TTL passed); a lock of the connection's: its server restarts under the holder"})
	register(fault{name: "latency", applies: proxied, run: runLatency, // every implementation a proxy can carry
		options:     []impl.Option{NetDelayOption, NetJitterOption},
		description: "every server behind a loopback proxy adding --net-delay ± --net-jitter: lock latency and errors under RTT"})
	register(fault{name: "partition", applies: both(partitionable, proxied), run: runPartition,
		options:     []impl.Option{NetDelayOption, NetJitterOption},
		description: "servers cut off behind proxies: Redlock with one and three masters cut, ZooKeeper with the client's server cut"})
}

// Options keys read from impl.Config.Options (the CLI sets them).
const (
	// OptNetDelay is the delay the latency proxies add each way.
	OptNetDelay = "net-delay"
	// OptNetJitter is the uniform ± added to OptNetDelay. Default 0.
	OptNetJitter = "net-jitter"
	// OptRestartDelay is how long a restarted Redlock master stays out
	// (restart). Default 0: it comes back at once.
	OptRestartDelay = "redlock-restart-delay"
)

// DefaultNetDelay is the latency scenario's delay when OptNetDelay is unset.
const DefaultNetDelay = time.Millisecond

// The fault scenarios' options.
var (
	NetDelayOption     = impl.DurationOption(OptNetDelay, DefaultNetDelay, 0, "latency/partition: delay the proxies add each way")
	NetJitterOption    = impl.DurationOption(OptNetJitter, 0, 0, "latency/partition: random ± added to --net-delay")
	RestartDelayOption = impl.DurationOption(OptRestartDelay, 0, 0, "restart: how long a restarted Redlock master stays out (the remedy: ≥ --ttl)")
)

// setupTimeout bounds starting servers and connecting clients.
const setupTimeout = 30 * time.Second

// fault is a scenario as this package writes it: it applies to, and
// runs on, a subject resolved once from the driver.
type fault struct {
	name, description string
	options           []impl.Option
	// applies, if set, says why the fault cannot be staged on a subject.
	applies func(s subject) error
	run     func(ctx context.Context, spec engine.CellSpec, s subject) (result.Cell, error)
}

func register(f fault) {
	ef := engine.Fault{Name: f.name, Description: f.description, Options: f.options,
		Run: func(ctx context.Context, spec engine.CellSpec, d impl.Driver) (result.Cell, error) {
			spec.Scenario, _ = engine.LookupScenario(f.name)
			spec.Repeat = max(spec.Repeat, 1)
			spec.Clients = max(spec.Clients, 1)
			spec.Config = spec.Config.WithDefaults()
			spec.Driver = d
			return f.run(ctx, spec, subjectOf(d))
		}}
	if f.applies != nil {
		ef.Applies = func(d impl.Driver) error { return f.applies(subjectOf(d)) }
	}
	engine.RegisterFault(ef)
}

// proxied: the fault is staged by proxies in front of the servers'
// addresses, and the subject's clients reach its servers only at the
// addresses they are given. A Redis Cluster's clients learn the nodes'
// own addresses from its slot table and go there: a proxy would carry
// their first contact and nothing of the lock's traffic, and a latency
// run on it reported 0.3 ms acquisitions "behind 2 ms of proxies".
func proxied(s subject) error {
	if s.need.Redirects {
		return fmt.Errorf("%s's clients connect to the %s nodes the servers name, past any proxy in front of the addresses given", s.Name, s.need.Kind)
	}
	return nil
}

// both applies where a and b do.
func both(a, b func(subject) error) func(subject) error {
	return func(s subject) error {
		if err := a(s); err != nil {
			return err
		}
		return b(s)
	}
}

// expiring: the fault needs a lease that ends without its holder, by a
// TTL, with the session or with the connection, on servers of the lock's
// own.
func expiring(s subject) error {
	if len(s.Needs) == 0 || !s.Caps.Any(impl.LeaseTTL|impl.LeaseSession|impl.LeaseConn) {
		return fmt.Errorf("%s has no lease that ends without its holder (TTL, session or connection)", s.Name)
	}
	return nil
}

// pausable: a lease that ends without its holder and fencing tokens, or a
// lock of the connection's, which a stalled holder keeps (the scenario
// then measures what the stall costs the waiters).
func pausable(s subject) error {
	if len(s.Needs) > 0 && s.Caps.Has(impl.LeaseConn) {
		return nil
	}
	return fenceable(s)
}

// restartable: a quorum of masters, one of which restarts empty, or a
// lock of the connection's on a server of a kind lockbench can start,
// which restarts under its holder.
func restartable(s subject) error {
	if len(s.Needs) > 0 && s.Caps.Has(impl.LeaseConn) && s.kind.Name != "" {
		return nil
	}
	return quorum(s)
}

// fenceable: an expiring lease, and fencing tokens from the lock itself
// or from a counter its servers keep.
func fenceable(s subject) error {
	if err := expiring(s); err != nil {
		return err
	}
	if !s.Caps.Has(impl.Fencing) && s.need.Fence == nil {
		return fmt.Errorf("%s hands out no fencing token, and its %s servers keep no fencing counter", s.Name, s.need.Kind)
	}
	return nil
}

// failsOver: a single server that can have a replica promoted, a quorum
// of masters, or an ensemble that moves sessions.
func failsOver(s subject) error {
	if s.layout() == unstaged {
		return fmt.Errorf("lockbench stages no failover of %s servers with a lease like %s's", s.need.Kind, s.Name)
	}
	return nil
}

// quorum: the fault needs a lock granted by a majority of masters.
func quorum(s subject) error {
	if !s.Caps.Has(impl.Quorum) {
		return fmt.Errorf("it applies to locks granted by a quorum of masters, and %s is not", s.Name)
	}
	return nil
}

// partitionable: several servers, some of which can be cut off.
func partitionable(s subject) error {
	if l := s.layout(); l != masters && l != ensemble {
		return fmt.Errorf("it cuts off some of a quorum's masters or of a ZooKeeper ensemble, and %s has neither", s.Name)
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

// dialPair connects two clients, 0 and 1, to servers: a holder and the
// challenger the scripts that cut a server from under a lock set against
// it. On an error, what was connected is closed.
func dialPair(ctx context.Context, d impl.Driver, cfg impl.Config, servers impl.Servers) (a, b impl.Locker, err error) {
	if a, err = dial(ctx, d, cfg, servers, 0); err != nil {
		return nil, nil, err
	}
	if b, err = dial(ctx, d, cfg, servers, 1); err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, b, nil
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
	t.guardWrite(ctx, lease)
	call := time.Now()
	err := releaseBounded(ctx, lease)
	t.releasedOp(lease, call, err)
	if err != nil && !errors.Is(err, impl.ErrLockLost) {
		t.failed(err)
	}
	return err
}

// releaseScripted is release for a holder whose server the script killed
// or cut: its failure is the script's doing, counted in *failed.
func releaseScripted(ctx context.Context, t *tally, lease impl.Lease, failed *int64) {
	t.guardDrop(lease)
	call := time.Now()
	err := releaseBounded(ctx, lease)
	t.releasedOp(lease, call, err)
	if err != nil && !errors.Is(err, impl.ErrLockLost) {
		t.update(func() { *failed++ })
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
	t.acquiredOp(l, name, start, lease, err)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("faults: first holder: %w", err)
	}
	got := time.Now()
	t.acquired(got.Sub(start))
	t.granted(ctx, l, name, lease)
	return lease, got, nil
}

// acquire is a waiter's Acquire: it asks again after an error (a waiter
// wants the lock, and one slow reply must not end the scenario), counting
// every error, until it holds the lock or ctx is done. The latency
// recorded runs from the first call.
func acquire(ctx context.Context, t *tally, l impl.Locker, name string, retry time.Duration) (impl.Lease, time.Time, error) {
	start := time.Now()
	for {
		call := time.Now()
		lease, err := l.Acquire(ctx, name)
		t.acquiredOp(l, name, call, lease, err)
		if err == nil {
			got := time.Now()
			t.acquired(got.Sub(start))
			t.granted(ctx, l, name, lease)
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
		t.closeGuard(l)
		l.Close()
	}
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// optDuration reads a duration option; absent or empty gives def.
func optDuration(c impl.Config, key string, def time.Duration) (time.Duration, error) {
	s := c.Options[key]
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: option %s=%q: want a duration ≥ 0", engine.ErrUsage, key, s)
	}
	return d, nil
}
