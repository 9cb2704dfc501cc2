package plan_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/etcdmutex"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/impl/zk"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/plan"
	"github.com/lockbench/lockbench/result/hlog"
	"github.com/lockbench/lockbench/sandboxtest"
)

// In the abandon scenario twelve clients queue in id order; the odd ones
// but the last (1, 3, 5, 7, 9) give up while queued, the rest get the lock
// in queue order, nothing is left on the server, and the release wake-ups
// are exactly what theory says: a predecessor watch (zk-pred, etcd-recipe) pays one wake-up per
// leave (its successor re-watches) and one per hand-off, n−1 in all; a
// watch on all children wakes every other waiter at each leave and each
// release, n(n−1)/2 less one per leaver.
func TestAbandonQueueDrainsInOrder(t *testing.T) {
	srv := sandboxtest.Start(t, zk.Ensemble, redis.Need, etcdmutex.Need)
	sc, _ := lockbench.LookupScenario("abandon")
	const n, leavers = 12, 5
	inOrder := []int{0, 2, 4, 6, 8, 10, 11}
	for _, tc := range []struct {
		impl    string
		wakeups int64 // release wake-ups; -1 for a poller
		ordered bool
	}{
		{"zk-pred", n - 1, true},
		{"zk-naive", n*(n-1)/2 - leavers, true},
		{"etcd-recipe", n - 1, true},
		{"zk-lock", n - 1, true}, // zk.Lock cannot be cancelled: the session goes instead
		{"redis", -1, false},
	} {
		t.Run(tc.impl, func(t *testing.T) {
			c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
				Impl: tc.impl, Scenario: sc, Clients: n, Hold: time.Millisecond,
				ServerKinds: sandbox.Meter{},
				Config:      impl.Config{Servers: srv, Namespace: "abandon-" + tc.impl},
			})
			if err != nil {
				t.Fatal(err)
			}
			a := c.Abandon
			if a == nil || a.Count != leavers || c.Acquires != n-leavers || c.Errors != 0 || c.SafetyViolations != 0 {
				t.Fatalf("abandoned %+v, acquires %d, errors %v, violations %d", a, c.Acquires, c.ErrorsByClass, c.SafetyViolations)
			}
			if a.Leftover != 0 {
				t.Errorf("%d nodes or keys left on the server after every client was done", a.Leftover)
			}
			got := slices.Clone(a.Granted)
			if !tc.ordered {
				slices.Sort(got)
			}
			if !slices.Equal(got, inOrder) || a.OutOfOrder != 0 && tc.ordered {
				t.Errorf("granted %v (%d out of order), want %v", a.Granted, a.OutOfOrder, inOrder)
			}
			if a.RoundTripsPer < 1 || a.WaitUs.Max <= 0 {
				t.Errorf("an abandonment cost nothing: %+v", a)
			}
			if tc.wakeups < 0 {
				return
			}
			if c.Settle != "exact" || c.TheoryWakeups == nil || *c.TheoryWakeups != tc.wakeups || c.ReleaseWakeups != tc.wakeups {
				t.Errorf("release wake-ups %d, theory %v, want %d (settle %s)", c.ReleaseWakeups, c.TheoryWakeups, tc.wakeups, c.Settle)
			}
			if got, ok := c.ServerCounts.Fired(); !ok || got != c.ServerCounts.Received() {
				t.Errorf("server triggered %d watches, clients counted %d", got, c.ServerCounts.Received())
			}
		})
	}
}

// With --acquire-timeout a waiter that does not get the lock in time gives
// up: counted as abandoned, not as an error, its wait recorded in the
// abandon histogram of the interval log; the holders still get the lock.
// For a queued lock the abandoned node is deleted each time, so the
// waiters behind it move up rather than wait on a node that never changes.
func TestAcquireTimeoutGivesUp(t *testing.T) {
	srv := sandboxtest.Start(t, zk.Ensemble, redis.Need)
	dir := t.TempDir()
	hot, _ := lockbench.LookupScenario("hot")
	sum, err := plan.Run(context.Background(), plan.Plan{
		Impls: []string{"redis", "zk-pred"}, Scenarios: []string{"hot"}, Clients: []int{6}, Out: dir,
		Cell: lockbench.CellSpec{Scenario: hot, Locks: 1, Duration: 700 * time.Millisecond, Hold: 20 * time.Millisecond,
			AcquireTimeout: 10 * time.Millisecond, MaxTime: time.Minute, ConnectParallel: 8, Repeat: 1,
			ServerKinds: sandbox.Meter{},
			Config: impl.Config{Servers: srv, TTL: 10 * time.Second, Retry: 2 * time.Millisecond, SessionTimeout: 10 * time.Second,
				DialTimeout: 5 * time.Second, Jitter: 0.5, Seed: 1, Options: map[string]string{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sum.Cells {
		a := c.Abandon
		if a == nil || a.Count == 0 || a.TimeoutMs != 10 || c.Acquires == 0 || c.Errors != 0 || c.SafetyViolations != 0 {
			t.Fatalf("%s: abandoned %+v, acquires %d, errors %v", c.Impl, a, c.Acquires, c.ErrorsByClass)
		}
		if a.WaitUs.Max < 10_000 {
			t.Errorf("%s: gave up after %vµs, before the 10ms timeout", c.Impl, a.WaitUs.Max)
		}
		log, err := hlog.ReadCell(dir, c)
		if err != nil {
			t.Fatal(err)
		}
		var logged int64
		for _, h := range log.Tagged("abandon") {
			logged += h.TotalCount()
		}
		if logged != a.Count {
			t.Errorf("%s: the .hlog holds %d abandoned waits, the summary %d", c.Impl, logged, a.Count)
		}
	}
}
