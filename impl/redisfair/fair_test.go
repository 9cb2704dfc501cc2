package redisfair_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redisfair"
	"github.com/lockbench/lockbench/internal/sandbox"
	_ "github.com/lockbench/lockbench/scenarios" // the load scenarios
)

// A burst of 64 through the engine: each release tells the head waiter
// alone, so 63 hand-offs cost 63 messages, 63 wake-ups and 63 PUBLISHes
// on the server, none wasted, and the barrier is exact.
func TestBurstTellsOnlyTheHead(t *testing.T) {
	const n = 64
	s := server(t)
	adm := admin(t, s)
	burst, _ := engine.LookupScenario("burst")
	before := publishes(t, adm)
	cell, err := engine.RunCellDetail(context.Background(), engine.CellSpec{
		Impl: "redis-fair", Scenario: burst, Clients: n, Locks: 1, ConnectParallel: 32,
		ServerKinds: sandbox.Meter{},
		Config:      impl.Config{Servers: s, Namespace: namespace(t)},
	})
	if err != nil {
		t.Fatal(err)
	}
	published := publishes(t, adm) - before
	if cell.Acquires != n || cell.Errors != 0 || cell.SafetyViolations != 0 {
		t.Errorf("acquires %d errors %v violations %d", cell.Acquires, cell.ErrorsByClass, cell.SafetyViolations)
	}
	if cell.Settle != "exact" {
		t.Errorf("settle %q, want exact", cell.Settle)
	}
	if cell.ReleaseWakeups != n-1 || cell.Wakeups != n-1 || cell.WastedWakeups != 0 {
		t.Errorf("release wake-ups %d, wake-ups %d, wasted %d; want %d, %d, 0", cell.ReleaseWakeups, cell.Wakeups, cell.WastedWakeups, n-1, n-1)
	}
	if cell.Notifications != n-1 {
		t.Errorf("%d messages delivered, want %d", cell.Notifications, n-1)
	}
	if published != n-1 {
		t.Errorf("the server counted %d PUBLISH calls, want %d", published, n-1)
	}
	if cell.TheoryWakeups == nil || *cell.TheoryWakeups != n-1 {
		t.Errorf("theory %v, want %d", cell.TheoryWakeups, n-1)
	}
	if f := cell.Fairness; f == nil || f.Jain < 0.999 || f.Starved != 0 {
		t.Errorf("fairness %+v, want Jain ≈ 1", f)
	}
}

// Waiters that arrive one after another are granted in that order: the
// server's queue holds them as they came, and each release goes to its
// head.
func TestGrantsFollowArrivalOrder(t *testing.T) {
	const n = 12
	s := server(t)
	adm := admin(t, s)
	ns := namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	holder := client(t, s, ns, 30*time.Second, nil)
	held, err := holder.Acquire(ctx, "l")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		grants []int
	)
	ws := make([]*redisfair.Locker, n)
	dones := make([]<-chan acquired, n)
	for i := range ws {
		ws[i] = client(t, s, ns, 30*time.Second, nil)
		dones[i] = startAcquire(t, ctx, ws[i], "l")
	}
	// The queue on the server, as the waiters arrived.
	queue, err := adm.LRange(ctx, redisfair.QueueKey(ns, "l"), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, w := range ws {
		want = append(want, owner(w, 1))
	}
	if !slices.Equal(queue, want) {
		t.Fatalf("queue %v, want the waiters in arrival order %v", queue, want)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range ws {
		wg.Go(func() {
			r := <-dones[i]
			if r.err != nil {
				t.Errorf("waiter %d: %v", i, r.err)
				return
			}
			mu.Lock()
			grants = append(grants, i)
			mu.Unlock()
			if err := r.lease.Release(ctx); err != nil {
				t.Errorf("waiter %d: release: %v", i, err)
			}
		})
	}
	wg.Wait()
	if !slices.Equal(grants, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}) {
		t.Errorf("grants in order %v, want arrival order", grants)
	}
	for i, w := range ws {
		if c := w.Counters(); c.ReleaseWakeups.Load() != 1 || c.WastedWakeups.Load() != 0 {
			t.Errorf("waiter %d: %d release wake-ups, %d wasted; want 1 and 0", i, c.ReleaseWakeups.Load(), c.WastedWakeups.Load())
		}
	}
}

// Under contention, in a closed loop, every grant goes to the waiter at
// the head of the queue as the previous holder saw it: each holder reads
// the queue while it holds the lock, and the next grant must be that
// queue's head.
func TestClosedLoopGrantsAreFIFO(t *testing.T) {
	const clients, rounds = 6, 30
	s := server(t)
	adm := admin(t, s)
	ns := namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type grant struct {
		owner string
		queue []string // the queue while this grant was held
	}
	var (
		mu     sync.Mutex
		grants []grant
		wg     sync.WaitGroup
	)
	for range clients {
		l := client(t, s, ns, 30*time.Second, nil)
		wg.Go(func() {
			for r := range rounds {
				lease, err := l.Acquire(ctx, "l")
				if err != nil {
					t.Errorf("Acquire: %v", err)
					return
				}
				q, err := adm.LRange(ctx, redisfair.QueueKey(ns, "l"), 0, -1).Result()
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				grants = append(grants, grant{owner(l, r+1), q})
				mu.Unlock()
				time.Sleep(200 * time.Microsecond)
				if err := lease.Release(ctx); err != nil {
					t.Errorf("Release: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	checked := 0
	for i := 1; i < len(grants); i++ {
		if q := grants[i-1].queue; len(q) > 0 {
			checked++
			if grants[i].owner != q[0] {
				t.Fatalf("grant %d went to %s; the queue when grant %d was held was %v", i, grants[i].owner, i-1, q)
			}
		}
	}
	if checked < len(grants)/2 {
		t.Errorf("only %d of %d hand-offs met a queue: not contended enough to show anything", checked, len(grants))
	}
}

// A waiter that gives up leaves neither the queue nor the timeout set
// holding anything of it, unsubscribes, gives those behind it back the
// fair-wait its place had added, and the waiter behind it is still told
// of the release.
func TestCancelledWaiterLeavesNothing(t *testing.T) {
	s := server(t)
	adm := admin(t, s)
	ns := namespace(t)
	ctx := context.Background()
	opts := map[string]string{redisfair.WaitOption.Name: "2s"}
	h, w1, w2 := client(t, s, ns, 30*time.Second, opts), client(t, s, ns, 30*time.Second, opts), client(t, s, ns, 30*time.Second, opts)
	held, err := h.Acquire(ctx, "l")
	if err != nil {
		t.Fatal(err)
	}
	c1, cancel1 := context.WithCancel(ctx)
	defer cancel1()
	d1 := startAcquire(t, c1, w1, "l")
	d2 := startAcquire(t, ctx, w2, "l")
	tkey := redisfair.TimeoutKey(ns, "l")
	before, err := adm.ZScore(ctx, tkey, owner(w2, 1)).Result()
	if err != nil {
		t.Fatal(err)
	}
	cancel1()
	select {
	case r := <-d1:
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled Acquire returned %v, want context.Canceled", r.err)
		}
	case <-time.After(guard):
		t.Fatal("cancelled Acquire still blocked")
	}
	queue, _ := adm.LRange(ctx, redisfair.QueueKey(ns, "l"), 0, -1).Result()
	places, _ := adm.ZRange(ctx, tkey, 0, -1).Result()
	if !slices.Equal(queue, []string{owner(w2, 1)}) || !slices.Equal(places, []string{owner(w2, 1)}) {
		t.Errorf("after the cancel: queue %v, timeout set %v; want the second waiter alone", queue, places)
	}
	after, _ := adm.ZScore(ctx, tkey, owner(w2, 1)).Result()
	if got := before - after; got != 2000 {
		t.Errorf("the waiter behind moved up %v ms, want the fair-wait, 2000", got)
	}
	ch := redisfair.ChannelPrefix(ns, "l") + ":" + owner(w1, 1)
	if subs, _ := adm.PubSubNumSub(ctx, ch).Result(); subs[ch] != 0 {
		t.Errorf("the cancelled waiter is still subscribed to %s", ch)
	}
	start := time.Now()
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-d2
	if r.err != nil {
		t.Fatalf("the waiter behind: %v", r.err)
	}
	// Its own wait would have run until the holder's 30 s lease expired:
	// only the release's message can have woken it.
	if waited := time.Since(start); waited > 5*time.Second || w2.Counters().ReleaseWakeups.Load() != 1 {
		t.Errorf("the waiter behind got the lock %v after the release, with %d release wake-ups", waited, w2.Counters().ReleaseWakeups.Load())
	}
	if err := r.lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := redisfair.Residue(ctx, s, ns); n != 0 {
		t.Errorf("%d keys left", n)
	}
}

// A head waiter that gives up while the lock is free (its holder's lock
// vanished without a release, so no one was told) hands its turn on: the
// waiter behind it is told at once instead of waiting out its place.
func TestHeadThatGivesUpHandsItsTurnOn(t *testing.T) {
	s := server(t)
	adm := admin(t, s)
	ns := namespace(t)
	ctx := context.Background()
	h, w1, w2 := client(t, s, ns, 30*time.Second, nil), client(t, s, ns, 30*time.Second, nil), client(t, s, ns, 30*time.Second, nil)
	if _, err := h.Acquire(ctx, "l"); err != nil {
		t.Fatal(err)
	}
	c1, cancel1 := context.WithCancel(ctx)
	defer cancel1()
	d1 := startAcquire(t, c1, w1, "l")
	d2 := startAcquire(t, ctx, w2, "l")
	if err := adm.Del(ctx, redisfair.Key(ns, "l")).Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cancel1()
	if r := <-d1; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled head returned %v", r.err)
	}
	select {
	case r := <-d2:
		if r.err != nil {
			t.Fatal(r.err)
		}
		r.lease.Release(ctx)
	case <-time.After(guard):
		t.Fatalf("the waiter behind a head that gave up was not told within %v", guard)
	}
	t.Logf("the next waiter held the lock %v after the head gave up", time.Since(start))
}

// A lease that expired is lost, and its release leaves the next holder's
// grant alone; the expired release still tells the head waiter, as
// Redisson's does.
func TestExpiredReleaseIsLost(t *testing.T) {
	s := server(t)
	ns := namespace(t)
	ctx := context.Background()
	a, b := client(t, s, ns, 50*time.Millisecond, nil), client(t, s, ns, 30*time.Second, nil)
	la, err := a.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(120 * time.Millisecond)
	lb, err := b.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := la.Release(ctx); !errors.Is(err, impl.ErrLockLost) {
		t.Fatalf("release of an expired lease: %v", err)
	}
	if err := lb.Release(ctx); err != nil {
		t.Fatalf("the next holder's release: %v", err)
	}
}
