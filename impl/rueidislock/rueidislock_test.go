package rueidislock_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/impl/rueidislock"
	"github.com/lockbench/lockbench/sandboxtest"
)

func TestConformance(t *testing.T) {
	d, ok := impl.Lookup("rueidislock")
	if !ok {
		t.Fatal("driver rueidislock not registered")
	}
	impltest.Run(t, d, sandboxtest.Start(t, d.Needs...), impltest.Options{})
}

func connect(t *testing.T, servers impl.Servers, client int) impl.Locker {
	t.Helper()
	l, err := rueidislock.New(context.Background(), impl.Config{Servers: servers, Namespace: t.Name(), Client: client})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// An uncontended Acquire is one try of the library's acquire script (the
// copy the adapter recognises it by): no wake-up, no retry, and a lock of
// KeyMajority keys at least on the server while held, none after.
func TestUncontendedIsOneTry(t *testing.T) {
	t.Parallel()
	servers := sandboxtest.Start(t, redis.Need)
	l := connect(t, servers, 1)
	ctx := context.Background()
	held, err := l.Acquire(ctx, "one")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := rueidislock.Residue(ctx, servers, t.Name()); err != nil || n < 2 {
		t.Errorf("%d keys while held (%v), want at least KeyMajority (2)", n, err)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	c := l.Counters().Snapshot()
	if c.Wakeups != 0 || c.Retries != 0 || c.RoundTrips < 3 {
		t.Errorf("uncontended cycle: %d wake-ups, %d retries, %d round trips; want 0, 0 and at least the 3 keys' scripts", c.Wakeups, c.Retries, c.RoundTrips)
	}
	if n, err := rueidislock.Residue(ctx, servers, t.Name()); err != nil || n != 0 {
		t.Errorf("%d keys after the release (%v)", n, err)
	}
}

// Waiters sleep on invalidations: a release wakes each of them once, every
// waiter hears of it (Notifications), and a waiter settles between.
func TestReleaseWakesEveryWaiter(t *testing.T) {
	t.Parallel()
	servers := sandboxtest.Start(t, redis.Need)
	ctx := context.Background()
	holder := connect(t, servers, 1)
	held, err := holder.Acquire(ctx, "herd")
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 4
	ls := make([]impl.Locker, waiters)
	got := make(chan impl.Lease, waiters)
	for i := range ls {
		ls[i] = connect(t, servers, 2+i)
		go func(l impl.Locker) {
			actx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			lease, err := l.Acquire(actx, "herd")
			if err != nil {
				t.Error(err)
			}
			got <- lease
		}(ls[i])
	}
	settled := func() bool {
		for _, l := range ls {
			if !l.(impl.Settler).Settled() {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(10 * time.Second); !settled(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the waiters did not settle")
		}
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	first := <-got
	var woken, notified int64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		woken, notified = 0, 0
		for _, l := range ls {
			woken += l.Counters().Wakeups.Load()
			notified += l.Counters().Notifications.Load()
		}
		if woken >= waiters || time.Now().After(deadline) {
			break
		}
	}
	if woken < waiters || notified < waiters {
		t.Errorf("one release: %d wake-ups and %d invalidations over %d waiters, want each woken and told", woken, notified, waiters)
	}
	if first != nil {
		first.Release(ctx)
	}
	for range waiters - 1 {
		if lease := <-got; lease != nil {
			lease.Release(ctx)
		}
	}
}
