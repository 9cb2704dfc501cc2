package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/impl/zk"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/sandboxtest"
	_ "github.com/lockbench/lockbench/scenarios" // the load scenarios

	_ "github.com/lockbench/lockbench/impl/zklock"
)

const name = "zk-lock"

func driver(t *testing.T) impl.Driver {
	t.Helper()
	d, ok := impl.Lookup(name)
	if !ok {
		t.Fatalf("driver %s not registered", name)
	}
	return d
}

func TestConformance(t *testing.T) {
	servers := sandboxtest.Start(t, zk.Ensemble)
	impltest.Run(t, driver(t), servers, impltest.Options{})
}

// The library's wait, read off the wire, makes the burst's barrier exact:
// one wake-up per hand-off, n−1 in all, every one a watch the server
// triggered.
func TestBurstIsExact(t *testing.T) {
	servers := sandboxtest.Start(t, zk.Ensemble)
	burst, _ := engine.LookupScenario("burst")
	for _, n := range []int{2, 8, 32} {
		c, err := engine.RunCell(context.Background(), engine.CellSpec{
			Impl: name, Scenario: burst, Clients: n, Hold: time.Millisecond,
			ServerKinds: sandbox.Meter{},
			Config:      impl.Config{Servers: servers, Namespace: fmt.Sprintf("burst-%d", n)},
		})
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		N := int64(n)
		if c.Acquires != N || c.Errors != 0 || c.SafetyViolations != 0 || c.Settle != "exact" {
			t.Errorf("n=%d: acquires %d errors %d violations %d settle %q", n, c.Acquires, c.Errors, c.SafetyViolations, c.Settle)
		}
		if c.Wakeups != N-1 || c.ReleaseWakeups != N-1 || c.Retries != N-1 {
			t.Errorf("n=%d: wakeups %d release %d retries %d, want %d each", n, c.Wakeups, c.ReleaseWakeups, c.Retries, N-1)
		}
		if got, ok := c.ServerCounts.Fired(); !ok || got != N-1 || c.ServerCounts.Received() != N-1 {
			t.Errorf("n=%d: server triggered %d watches, clients counted %d, want %d (%s)", n, got, c.ServerCounts.Received(), N-1, c.ServerNote)
		}
	}
}

// A waiter that gives up leaves no gap in the queue: its session closes,
// its node goes, and the waiter behind it is told and gets the lock when
// the holder releases. (zk.Lock alone would leave the node queued and the
// waiter behind it watching it for as long as the session lives.)
func TestGivenUpWaiterLeavesNoGap(t *testing.T) {
	servers := sandboxtest.Start(t, zk.Ensemble)
	ctx := context.Background()
	d := driver(t)
	cfg := impl.Config{Servers: servers, Namespace: "gap"}
	var ls [3]impl.Locker
	for i := range ls {
		l, err := d.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ls[i] = l
	}
	holder, quitter, behind := ls[0], ls[1], ls[2]
	held, err := holder.Acquire(ctx, "l")
	if err != nil {
		t.Fatal(err)
	}
	qctx, quit := context.WithCancel(ctx)
	qerr := make(chan error, 1)
	go func() { _, err := quitter.Acquire(qctx, "l"); qerr <- err }()
	waitSettled(t, quitter.(impl.Settler))
	got := make(chan error, 1)
	go func() {
		bctx, cancel := context.WithTimeout(ctx, impltest.Guard)
		defer cancel()
		lease, err := behind.Acquire(bctx, "l")
		if err == nil {
			err = lease.Release(ctx)
		}
		got <- err
	}()
	waitSettled(t, behind.(impl.Settler))
	quit()
	if err := <-qerr; !errors.Is(err, context.Canceled) {
		t.Fatalf("given-up Acquire returned %v, want context.Canceled", err)
	}
	if n, err := zk.Residue(ctx, servers, "gap"); err != nil || n != 2 {
		t.Fatalf("queue after giving up holds %d nodes (%v), want the holder's and the waiter's", n, err)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the waiter behind the one that gave up: %v", err)
	}
	// The quitter works again, on its new session.
	lease, err := quitter.Acquire(ctx, "l")
	if err != nil {
		t.Fatalf("after giving up: %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func waitSettled(t *testing.T, s impl.Settler) {
	t.Helper()
	deadline := time.Now().Add(impltest.Guard)
	for !s.Settled() {
		if time.Now().After(deadline) {
			t.Fatalf("waiter not settled within %v", impltest.Guard)
		}
		time.Sleep(time.Millisecond)
	}
}
