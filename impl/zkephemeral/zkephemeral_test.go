package zkephemeral_test

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
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/sandboxtest"
	_ "github.com/lockbench/lockbench/scenarios" // the load scenarios

	_ "github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/impl/zkephemeral"
)

const name = "zk-ephemeral"

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

// The herd in its exact form: every release wakes every waiter, n(n−1)/2
// in all; each client's create fails once on arrival and once per release
// it loses, n(n−1)/2 too; the server triggered exactly the watches the
// clients were told of. Cells run one at a time: the server's counters are
// comparable only when lockbench is its only client.
func TestBurstIsExactHerd(t *testing.T) {
	servers := sandboxtest.Start(t, zk.Ensemble)
	burst, _ := engine.LookupScenario("burst")
	for _, n := range []int{2, 8, 32} {
		for run := range 3 {
			c, err := engine.RunCell(context.Background(), engine.CellSpec{
				Impl: name, Scenario: burst, Clients: n, Hold: time.Millisecond,
				ServerKinds: sandbox.Meter{},
				Config:      impl.Config{Servers: servers, Namespace: fmt.Sprintf("burst-%d-%d", n, run)},
			})
			if err != nil {
				t.Fatalf("n=%d: %v", n, err)
			}
			N := int64(n)
			herd := N * (N - 1) / 2
			if c.Acquires != N || c.Errors != 0 || c.SafetyViolations != 0 || c.Settle != "exact" {
				t.Errorf("n=%d: acquires %d errors %d violations %d settle %q", n, c.Acquires, c.Errors, c.SafetyViolations, c.Settle)
			}
			if c.Wakeups != herd || c.ReleaseWakeups != herd || c.TheoryWakeups == nil || *c.TheoryWakeups != herd {
				t.Errorf("n=%d: wakeups %d release %d theory %v, want %d", n, c.Wakeups, c.ReleaseWakeups, c.TheoryWakeups, herd)
			}
			if c.FailedCreates != herd || c.Retries != herd {
				t.Errorf("n=%d: failed creates %d retries %d, want %d", n, c.FailedCreates, c.Retries, herd)
			}
			// Only the last waiter woken by each release wins it.
			if c.WastedWakeups != herd-(N-1) {
				t.Errorf("n=%d: wasted %d of %d wake-ups, want %d", n, c.WastedWakeups, c.Wakeups, herd-(N-1))
			}
			if got, ok := c.ServerCounts.Fired(); !ok || got != herd || c.ServerCounts.Received() != herd {
				t.Errorf("n=%d: server triggered %d watches, clients counted %d, want %d (%s)", n, got, c.ServerCounts.Received(), herd, c.ServerNote)
			}
		}
	}
}

// A holder that dies (its connection cut, no close) keeps the lock until
// its session expires; then the waiter gets it, and never before.
func TestCrashedHolderFreesOnSessionExpiry(t *testing.T) {
	servers := sandboxtest.Start(t, zk.Ensemble)
	crash, _ := engine.LookupScenario("crash")
	const session, repeat = 2 * time.Second, 2
	c, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: name, Scenario: crash, Clients: 2, Repeat: repeat, MaxTime: 2 * time.Minute,
		ServerKinds: sandbox.Meter{},
		Config:      impl.Config{Servers: servers, Namespace: "crash", SessionTimeout: session},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Faults == nil || c.Faults.RecoveryMs == nil || c.Faults.RecoveryMs.Count != repeat {
		t.Fatalf("no recovery per repeat: %+v (%s)", c.Faults, report.FaultSentence(c))
	}
	if c.SafetyViolations != 0 || c.Acquires != 2*repeat {
		t.Errorf("violations %d acquires %d, want 0 and %d", c.SafetyViolations, c.Acquires, 2*repeat)
	}
	// The waiter could only get in once the server expired the session
	// (on its tick): not before a good part of the timeout had passed.
	if min := c.Faults.RecoveryMs.Min; min < float64(session.Milliseconds())/2 {
		t.Errorf("the waiter got the lock %.0f ms after the crash, before the %v session could expire", min, session)
	}
}

// An Acquire given up while it waits returns ctx's error, leaves no node
// and no waiter: the holder's release then leaves the lock free.
func TestGivenUpAcquireLeavesNoNode(t *testing.T) {
	servers := sandboxtest.Start(t, zk.Ensemble)
	ctx := context.Background()
	d := driver(t)
	cfg := impl.Config{Servers: servers, Namespace: "giveup"}
	a, err := d.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := d.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	held, err := a.Acquire(ctx, "l")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		wctx, cancel := context.WithTimeout(ctx, time.Duration(1+i%5)*time.Millisecond)
		_, err := b.Acquire(wctx, "l")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("try %d: %v, want deadline exceeded", i, err)
		}
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := zkephemeral.Residue(ctx, servers, "giveup"); err != nil || n != 0 {
		t.Fatalf("%d lock nodes after the release (%v), want 0", n, err)
	}
	// Each try creates at most once: a deadline ends the wait, not a
	// retry loop.
	if fc := b.Counters().FailedCreates.Load(); fc < 1 || fc > 20 {
		t.Errorf("b counted %d failed creates for 20 tries", fc)
	}
}
