package redsync_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redsync"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/scenarios"
)

// fleet is five redis-server masters shared by every test. A test that
// stops masters restarts them in t.Cleanup, so tests do not run in parallel.
var (
	fleet   *sandbox.Fleet
	skipMsg string
)

func TestMain(m *testing.M) {
	f, err := sandbox.Start(context.Background(), sandbox.Spec{Redis: 5})
	switch {
	case errors.Is(err, sandbox.ErrMissing):
		skipMsg = "redis-server not installed: apt-get install -y redis-server"
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fleet = f
	code := m.Run()
	if f != nil {
		f.Close()
	}
	os.Exit(code)
}

func needFleet(t *testing.T) {
	t.Helper()
	if skipMsg != "" {
		t.Skip(skipMsg)
	}
}

func config(t *testing.T) impl.Config {
	return impl.Config{
		Servers:   impl.Servers{Redlock: fleet.RedisAddrs()},
		Namespace: t.Name(),
		Seed:      1,
	}
}

func hot(t *testing.T) scenarios.Scenario {
	s, ok := scenarios.Lookup("hot")
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
	needFleet(t)
	c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
		Impl: "redsync", Scenario: hot(t), Clients: 4, Duration: 500 * time.Millisecond,
		Config: config(t),
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
	needFleet(t)
	cfg := config(t)
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
	needFleet(t)
	l := newLocker(t, config(t)) // connected while every master is up
	stopped := []int{0, 1, 2}
	t.Cleanup(func() {
		for _, i := range stopped {
			if !fleet.Redis[i].Running() {
				fleet.Redis[i].Restart(context.Background())
			}
		}
	})
	var wg sync.WaitGroup
	for _, i := range stopped {
		wg.Go(func() {
			if err := fleet.Redis[i].Stop(); err != nil {
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
	if !errors.As(err, &ne) || !slices.ContainsFunc(stopped, func(i int) bool { return fleet.Redis[i].Addr == ne.Addr }) {
		t.Errorf("no *impl.NodeError naming a stopped master in %v", err)
	}
}
