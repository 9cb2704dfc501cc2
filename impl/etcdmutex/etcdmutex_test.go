package etcdmutex_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/etcdmutex"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/sandboxtest"
)

// servers starts an etcd for the test (or takes LOCKBENCH_ETCD); the test
// skips, saying how to build etcd, when there is none.
func servers(t *testing.T) impl.Servers {
	t.Helper()
	return sandboxtest.Start(t, etcdmutex.Need)
}

func TestConformance(t *testing.T) {
	d, ok := impl.Lookup("etcd-recipe")
	if !ok {
		t.Fatal("driver etcd-recipe not registered")
	}
	impltest.Run(t, d, servers(t), impltest.Options{})
}

// A burst of 64 on one lock: the lock passes down the queue with one
// wake-up per release, and the server sent exactly the watch events the
// clients' connections received. The server's figure,
// etcd_debugging_mvcc_events_total (watch_triggered), counts events the
// server took off its watchers' queues to send, one per event per
// watcher; waiters watch with WithFilterPut, so these are the deletions of
// watched predecessors. Cells run one at a time, and nothing else uses
// this server, so its deltas are the cell's.
func TestBurstWakesOnePerRelease(t *testing.T) {
	s := servers(t)
	const n = 64
	burst, _ := engine.LookupScenario("burst")
	res, err := engine.RunCellDetail(context.Background(), engine.CellSpec{
		Impl: "etcd-recipe", Scenario: burst, Clients: n, Locks: 1, Hold: time.Millisecond,
		ServerKinds: sandbox.Meter{},
		Config:      impl.Config{Servers: s, Namespace: fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Cell
	if c.Acquires != n || c.Errors != 0 || c.SafetyViolations != 0 {
		t.Fatalf("acquires %d errors %d (%v) violations %d", c.Acquires, c.Errors, c.ErrorsByClass, c.SafetyViolations)
	}
	if c.Settle != "exact" {
		t.Errorf("settle %q, want exact", c.Settle)
	}
	if c.ReleaseWakeups != n-1 || c.Wakeups != n-1 || c.WastedWakeups != 0 {
		t.Errorf("release wake-ups %d, wake-ups %d, wasted %d; want %d, %d, 0", c.ReleaseWakeups, c.Wakeups, c.WastedWakeups, n-1, n-1)
	}
	if c.TheoryWakeups == nil || *c.TheoryWakeups != n-1 {
		t.Errorf("theory %v, want %d", c.TheoryWakeups, n-1)
	}
	events, ok := c.Server["etcd_debugging_mvcc_events_total"]
	if !ok {
		t.Fatalf("no server figures: %v (%s)", c.Server, c.ServerNote)
	}
	if events != c.Notifications || events != c.ServerCounts.Received() || events != n-1 {
		t.Errorf("server sent %d watch events, clients received %d (whole cell %d), want %d",
			events, c.Notifications, c.ServerCounts.Received(), n-1)
	}
	if c.Server["watch_triggered"] != events {
		t.Errorf("watch_triggered %d ≠ etcd_debugging_mvcc_events_total %d", c.Server["watch_triggered"], events)
	}
	t.Logf("server: %v", c.Server)
}

// Contended closed loop: the hand-offs go at the speed of a round trip
// (no watch waits for the server's 100 ms catch-up tick), about one
// notification per acquisition, and over the whole cell the server sent
// exactly the events the clients' connections received.
func TestClosedLoopServerAgrees(t *testing.T) {
	s := servers(t)
	hot, _ := engine.LookupScenario("hot")
	const n, acquires = 8, 400
	res, err := engine.RunCellDetail(context.Background(), engine.CellSpec{
		Impl: "etcd-recipe", Scenario: hot, Clients: n, Locks: 1, Acquires: acquires, Warmup: 200 * time.Millisecond,
		ServerKinds: sandbox.Meter{},
		Config:      impl.Config{Servers: s, Namespace: fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Cell
	if c.Acquires != acquires || c.Errors != 0 || c.SafetyViolations != 0 {
		t.Fatalf("acquires %d errors %d (%v) violations %d", c.Acquires, c.Errors, c.ErrorsByClass, c.SafetyViolations)
	}
	if c.Server["watch_triggered"] != c.ServerCounts.Received() {
		t.Errorf("server sent %d watch events, clients received %d", c.Server["watch_triggered"], c.ServerCounts.Received())
	}
	// One release wake-up per hand-off: every measured acquisition was
	// one, and after the last up to n−1 queued waiters are still woken,
	// so the counts are the acquisitions give or take n−1 — not the ±50%
	// this test allowed (seen here: 400 acquisitions, 404–407).
	for what, got := range map[string]int64{"notifications": c.Notifications, "release wake-ups": c.ReleaseWakeups} {
		if got < acquires-(n-1) || got > acquires+(n-1) {
			t.Errorf("%d %s for %d acquisitions by %d clients, want %d ± %d (one per hand-off)", got, what, acquires, n, acquires, n-1)
		}
	}
	// A hand-off paced by the catch-up tick would take ~100 ms; under
	// heavy load a round trip can take tens of ms, so the bound is loose.
	if c.HandoffGapUs != nil && c.HandoffGapUs.P50 > 50_000 {
		t.Errorf("hand-off gap p50 %.0f µs: waiters wait for the server's catch-up tick", c.HandoffGapUs.P50)
	}
	t.Logf("%.0f acq/s, hand-off p50 %.0f µs, %.2f notifications and %.2f round trips per acquisition; server %v",
		c.AcquiresPerS, c.HandoffGapUs.P50, c.NotificationsPerAcquire, c.RoundTripsPerAcquire, c.Server)
}

// A cancelled waiter's key goes at once, and the holder's stays.
func TestCancelledWaiterLeavesOnlyTheHolder(t *testing.T) {
	s := servers(t)
	ctx := context.Background()
	ns := fmt.Sprintf("cancel-%d", time.Now().UnixNano())
	cfg := impl.Config{Servers: s, Namespace: ns}
	a, err := etcdmutex.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := etcdmutex.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	held, err := a.Acquire(ctx, "l")
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = b.Acquire(wctx, "l")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiter returned %v, want deadline exceeded", err)
	}
	if n, err := etcdmutex.Residue(ctx, s, ns); err != nil || n != 1 {
		t.Errorf("keys after the cancelled wait: %d (%v), want only the holder's", n, err)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := etcdmutex.Residue(ctx, s, ns); err != nil || n != 0 {
		t.Errorf("keys after release: %d (%v), want 0", n, err)
	}
}

// A holder whose lease ends (revoked here, as the server does when it
// expires) loses the lock: the waiter is told and gets it, and the stale
// Release says impl.ErrLockLost.
func TestExpiredLeaseHandsOnAndReleaseSaysLost(t *testing.T) {
	s := servers(t)
	ctx := context.Background()
	ns := fmt.Sprintf("expire-%d", time.Now().UnixNano())
	cfg := impl.Config{Servers: s, Namespace: ns, SessionTimeout: 30 * time.Second}
	a, err := etcdmutex.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := etcdmutex.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	stale, err := a.Acquire(ctx, "l")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		l, err := b.Acquire(ctx, "l")
		if err == nil {
			defer l.Release(ctx)
		}
		done <- err
	}()
	for !b.Settled() {
		time.Sleep(time.Millisecond)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: s[etcdmutex.Need.Role], Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	leases, err := cli.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Revoke a's lease: the one whose key holds the lock.
	resp, err := cli.Get(ctx, etcdmutex.Root+"/"+ns+"/l/", clientv3.WithFirstCreate()...)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("holder's key: %v %v", resp, err)
	}
	if _, err := cli.Revoke(ctx, clientv3.LeaseID(resp.Kvs[0].Lease)); err != nil {
		t.Fatalf("revoke (of %d leases): %v", len(leases.Leases), err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("waiter after the holder's lease ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was not told of the holder's lease ending")
	}
	err = stale.Release(ctx)
	if !errors.Is(err, impl.ErrLockLost) || a.Counters().Lost.Load() != 1 {
		t.Fatalf("stale Release: %v (lost %d), want impl.ErrLockLost", err, a.Counters().Lost.Load())
	}
	// a's session ended under it; its next Acquire goes on with a new
	// lease, and the lost session is counted.
	l, err := a.Acquire(ctx, "l")
	if err != nil {
		t.Fatalf("Acquire after the session ended: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for a.Counters().SessionLost.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := a.Counters().SessionLost.Load(); n != 1 {
		t.Errorf("SessionLost %d, want 1", n)
	}
}

func TestUnreachableIsPromptAndClassified(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	start := time.Now()
	_, err = etcdmutex.New(context.Background(), impl.Config{
		Servers: impl.Servers{etcdmutex.Need.Role: {addr}}, DialTimeout: 500 * time.Millisecond,
	})
	if !errors.Is(err, impl.ErrUnreachable) || impl.Class(err) != impl.ClassUnreachable {
		t.Fatalf("New against nothing: %v, want impl.ErrUnreachable", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("New took %v to give up, DialTimeout 500ms", took)
	}
}

func TestTTLRoundsUp(t *testing.T) {
	for in, want := range map[time.Duration]int64{0: 1, 100 * time.Millisecond: 1, time.Second: 1,
		1500 * time.Millisecond: 2, 2 * time.Second: 2, 10 * time.Second: 10} {
		if got := etcdmutex.TTL(in); got != want {
			t.Errorf("TTL(%v) = %d, want %d", in, got, want)
		}
	}
}

// The guarded register's transactions keep the rules every server kind's
// must.
func TestGuard(t *testing.T) {
	impltest.Register(t, etcdmutex.Guard, servers(t)[etcdmutex.Need.Role])
}
