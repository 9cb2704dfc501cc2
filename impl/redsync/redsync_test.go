package redsync_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/impl/redlock"
	"github.com/lockbench/lockbench/impl/redsync"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/sandboxtest"
)

// masters starts the Redlock masters for the test (or takes them from
// LOCKBENCH_REDLOCK).
func masters(t *testing.T) impl.Servers {
	t.Helper()
	return sandboxtest.Start(t, redlock.Masters)
}

func config(t *testing.T, servers impl.Servers) impl.Config {
	return impl.Config{
		Servers:   servers,
		Namespace: t.Name(),
		Seed:      1,
	}
}

func TestConformance(t *testing.T) {
	d, ok := impl.Lookup("redsync")
	if !ok {
		t.Fatal("driver redsync not registered")
	}
	impltest.Run(t, d, sandboxtest.Start(t, d.Needs...), impltest.Options{
		// redsync bounds each try's requests, and its undo of a failed
		// try, by --redsync-timeout-factor of the expiry, and on a starved
		// test machine (-race, a loaded CI runner) replies take longer: a
		// try then finds too few masters answering and the Acquire fails
		// with impl.ErrNoQuorum, or the undo misses a master, whose key
		// stays for the TTL if the Acquire then ends in a no-quorum. An
		// Acquire that ends with its ctx no longer depends on the bound
		// (its cleanup has one of its own), but these do. Half the TTL
		// keeps the bound from biting without touching what is checked.
		// The suite's TTLs are the keys' expiry.
		Configure: func(cfg *impl.Config) {
			cfg.Options = map[string]string{"redsync-timeout-factor": "0.5", "redsync-expiry": cfg.TTL.String()}
		},
	})
}

func hot(t *testing.T) lockbench.Scenario {
	s, ok := lockbench.LookupScenario("hot")
	if !ok {
		t.Fatal("no scenario hot")
	}
	return s
}

// clients numbers the Lockers tests make, so that each draws its own tokens.
var clients atomic.Int64

func newLocker(t *testing.T, cfg impl.Config) impl.Locker {
	t.Helper()
	cfg.Client = int(clients.Add(1))
	l, err := redsync.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestAcquires(t *testing.T) {
	c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
		Impl: "redsync", Scenario: hot(t), Clients: 4, Duration: 500 * time.Millisecond,
		ServerKinds: sandbox.Meter{},
		Config:      config(t, masters(t)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.SafetyViolations != 0 {
		t.Errorf("%d safety violations: %+v", c.SafetyViolations, c.Violations)
	}
	if c.Acquires == 0 || c.Errors != 0 || c.Lost != 0 {
		t.Errorf("acquires %d, errors %v, lost %d", c.Acquires, c.ErrorsByClass, c.Lost)
	}
	if c.Retries == 0 || c.ValidityExpired != 0 || c.NoQuorum != c.Retries {
		t.Errorf("retries %d, no quorum %d, validity expired %d", c.Retries, c.NoQuorum, c.ValidityExpired)
	}
}

func TestCancelLeavesNothing(t *testing.T) {
	cfg := config(t, masters(t))
	a, b := newLocker(t, cfg), newLocker(t, cfg)
	ctx := context.Background()
	held, err := a.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := b.Acquire(cctx, "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("blocked acquire: %v, want deadline exceeded", err)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	c := newLocker(t, cfg)
	if _, err := c.Acquire(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if n := c.Counters().Retries.Load(); n != 0 {
		t.Errorf("fresh client needed %d retries after a cancelled acquire", n)
	}
}

func TestThreeMastersDownFailsFast(t *testing.T) {
	// A fleet of the test's own: it stops masters and leaves them stopped.
	f := sandboxtest.StartFleet(t, sandbox.Spec{serverkind.Redis: redlock.Masters.Count})
	ms := f.Servers[serverkind.Redis]
	l := newLocker(t, config(t, impl.Servers{redlock.Masters.Role: f.Addrs(serverkind.Redis)})) // connected while every master is up
	stopped := []int{0, 1, 2}
	var wg sync.WaitGroup
	for _, i := range stopped {
		wg.Go(func() {
			if err := ms[i].Stop(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Fail fast: no quorum is the answer, not the context's deadline.
	_, err := l.Acquire(ctx, "y")
	if ctx.Err() != nil {
		t.Fatalf("acquire waited for the caller's deadline instead of failing fast: %v", err)
	}
	if impl.Class(err) != impl.ClassNoQuorum {
		t.Fatalf("acquire: %v (class %s), want no quorum", err, impl.Class(err))
	}
	var ne *impl.NodeError
	if !errors.As(err, &ne) || !slices.ContainsFunc(stopped, func(i int) bool { return ms[i].Addr == ne.Addr }) {
		t.Errorf("no *impl.NodeError naming a stopped master in %v", err)
	}
}

// keysLeft counts, on every master, the keys of lock name in the test's
// namespace.
func keysLeft(t *testing.T, addrs []string, name string) int {
	t.Helper()
	n := 0
	for _, addr := range addrs {
		cl := goredis.NewClient(&goredis.Options{Addr: addr})
		k, err := cl.Exists(context.Background(), redis.Key(t.Name(), name)).Result()
		cl.Close()
		if err != nil {
			t.Fatal(err)
		}
		n += int(k)
	}
	return n
}

// deadlineDuringTry stalls the masters for impltest.StallFor and runs an Acquire of
// name on l whose deadline, 20ms (below the per-master bound, 50ms),
// passes while its SETs wait: every master's request times out on it,
// and ctx.Err() is still nil then (lagging).
func deadlineDuringTry(t *testing.T, l impl.Locker, addrs []string, name string) error {
	t.Helper()
	wait := impltest.Stall(t, addrs, impltest.StallFor)
	ctx, cancel := impltest.LaggingDeadline(20*time.Millisecond, 100*time.Millisecond)
	defer cancel()
	_, err := l.Acquire(ctx, name)
	wait()
	return err
}

// An Acquire whose deadline passes during a try returns ctx.Err(): not
// impl.ErrNoQuorum, and with no no-quorum or retry counted.
func TestDeadlineMidTryReturnsCtxErr(t *testing.T) {
	servers := masters(t)
	cfg := config(t, servers)
	a, b := newLocker(t, cfg), newLocker(t, cfg)
	ctx := context.Background()
	held, err := a.Acquire(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	err = deadlineDuringTry(t, b, servers[redlock.Masters.Role], "d")
	if !errors.Is(err, context.DeadlineExceeded) || impl.Class(err) != impl.ClassTimeout {
		t.Errorf("Acquire whose deadline passed mid-try: %v (class %s), want ctx.Err() (context.DeadlineExceeded)", err, impl.Class(err))
	}
	c := b.Counters()
	if c.NoQuorum.Load() != 0 || c.Retries.Load() != 0 || c.ValidityExpired.Load() != 0 {
		t.Errorf("no quorum %d, retries %d, validity expired %d counted for an Acquire cut short by its deadline",
			c.NoQuorum.Load(), c.Retries.Load(), c.ValidityExpired.Load())
	}
	if err := held.Release(ctx); err != nil {
		t.Errorf("the holder's lock was touched: %v", err)
	}
}

// An Acquire of a free lock whose deadline passes while its SETs wait on
// the masters deletes the try's keys before it returns, although
// redsync's own undo ran on the expired ctx: no key is left for the TTL.
func TestDeadlineMidTryLeavesNoKeys(t *testing.T) {
	servers := masters(t)
	addrs := servers[redlock.Masters.Role]
	cfg := config(t, servers)
	cfg.TTL = 30 * time.Second
	l := newLocker(t, cfg)
	err := deadlineDuringTry(t, l, addrs, "g")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire whose deadline passed mid-try: %v, want ctx.Err() (context.DeadlineExceeded)", err)
	}
	// Every stalled SET has run by now (the scripts have ended), before
	// the deletion sent after it.
	if n := keysLeft(t, addrs, "g"); n != 0 {
		t.Errorf("%d masters still hold the abandoned try's key", n)
	}
}

// A Release whose deadline passes mid-request is not a lost lock: it
// returns an error wrapping ctx.Err(), not impl.ErrLockLost, and counts
// nothing.
func TestReleasePastDeadlineIsNotLost(t *testing.T) {
	servers := masters(t)
	l := newLocker(t, config(t, servers))
	lease, err := l.Acquire(context.Background(), "r")
	if err != nil {
		t.Fatal(err)
	}
	wait := impltest.Stall(t, servers[redlock.Masters.Role], impltest.StallFor)
	ctx, cancel := impltest.LaggingDeadline(20*time.Millisecond, 100*time.Millisecond)
	defer cancel()
	err = lease.Release(ctx)
	wait()
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, impl.ErrLockLost) {
		t.Errorf("Release whose deadline passed mid-request: %v, want an error wrapping ctx.Err() and not impl.ErrLockLost", err)
	}
	if n := l.Counters().Lost.Load(); n != 0 {
		t.Errorf("lost = %d for a release cut short by its deadline", n)
	}
}
