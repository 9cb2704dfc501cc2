package zk_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/impl/zk"
)

// A holder and a waiter lose their sessions behind a partition longer than
// the session timeout: both are counted, neither hangs, the holder's release
// reports the lock lost, and a client on the other side gets the lock.
func TestSessionExpiryIsCountedAndNothingHangs(t *testing.T) {
	ctx := context.Background()
	servers := ensemble(t)
	p := impltest.NewCutProxy(t, servers[zk.Ensemble.Role][0])
	behind := impl.Config{Servers: impl.Servers{zk.Ensemble.Role: {p.Addr()}}, Namespace: "expiry",
		SessionTimeout: time.Second, DialTimeout: 5 * time.Second}
	direct := behind
	direct.Servers = servers

	holder, err := zk.New(ctx, behind, zk.Predecessor)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	waiter, err := zk.New(ctx, behind, zk.Naive)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	other, err := zk.New(ctx, direct, zk.Predecessor)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := holder.Prepare(ctx, []string{"l"}); err != nil {
		t.Fatal(err)
	}

	lease, err := holder.Acquire(ctx, "l")
	if err != nil {
		t.Fatal(err)
	}
	waitErr := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		_, err := waiter.Acquire(wctx, "l")
		waitErr <- err
	}()
	for !waiter.Settled() {
		time.Sleep(time.Millisecond)
	}

	p.Cut()
	// The server expires both sessions; their nodes go, so a client on the
	// server's side of the cut gets the lock.
	octx, cancel := context.WithTimeout(ctx, 15*time.Second)
	olease, err := other.Acquire(octx, "l")
	cancel()
	if err != nil {
		t.Fatalf("the lock never passed on after the holder's session expired: %v", err)
	}
	p.Heal()

	select {
	case err := <-waitErr:
		if !errors.Is(err, impl.ErrSessionLost) {
			t.Errorf("waiter returned %v, want session lost", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("waiter hangs after its session expired")
	}
	// The holder learns of the expiry on reconnecting; then its release
	// finds the node gone.
	deadline := time.Now().Add(15 * time.Second)
	for holder.Counters().SessionLost.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := lease.Release(ctx); !errors.Is(err, impl.ErrLockLost) {
		t.Errorf("release after expiry: %v, want lock lost", err)
	}
	if holder.Counters().SessionLost.Load() != 1 || holder.Counters().Lost.Load() != 1 {
		t.Errorf("holder counted session_lost=%d lost=%d, want 1 and 1",
			holder.Counters().SessionLost.Load(), holder.Counters().Lost.Load())
	}
	if waiter.Counters().SessionLost.Load() != 1 {
		t.Errorf("waiter counted session_lost=%d, want 1", waiter.Counters().SessionLost.Load())
	}
	if err := olease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// The expired client reconnected with a new session and works again.
	l2, err := holder.Acquire(ctx, "l")
	if err != nil {
		t.Fatalf("after expiry the client cannot lock again: %v", err)
	}
	l2.Release(ctx)
}
