package lockbench_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/zk"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/sandboxtest"
)

// A server that stops answering cannot hold a run open: with ZooKeeper
// frozen mid-cell (SIGSTOP), an interrupt ends the cell promptly, with an
// error saying so and the result of what was measured — go-zookeeper's
// calls take no context, so the clients' connections are closed under them.
func TestFrozenServerCannotHoldACellOpen(t *testing.T) {
	f := sandboxtest.StartFleet(t, sandbox.Spec{serverkind.ZooKeeper: 1})
	srv := impl.Servers{zk.Ensemble.Role: f.Addrs(serverkind.ZooKeeper)}
	hot, _ := lockbench.LookupScenario("hot")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res lockbench.Result
		err error
	}
	done := make(chan outcome, 1)
	granting := make(chan struct{})
	var once sync.Once
	go func() {
		res, err := lockbench.RunCellDetail(ctx, lockbench.CellSpec{
			Impl: "zk-pred", Scenario: hot, Clients: 4, Duration: time.Minute,
			ServerKinds:   sandbox.Meter{},
			Config:        impl.Config{Servers: srv, Namespace: "frozen", SessionTimeout: 30 * time.Second},
			ProgressEvery: 100 * time.Millisecond,
			Progress: func(p lockbench.Progress) {
				if p.Acquires > 0 {
					once.Do(func() { close(granting) })
				}
			},
		})
		done <- outcome{res, err}
	}()
	// Freeze once the cell is granting, however long connecting took.
	select {
	case <-granting:
	case o := <-done:
		t.Fatalf("the cell ended before granting: %v", o.err)
	case <-time.After(time.Minute):
		t.Fatal("no grant within a minute")
	}
	server := f.Servers[serverkind.ZooKeeper][0]
	if err := server.Freeze(); err != nil {
		t.Fatal(err)
	}
	defer server.Thaw()
	time.Sleep(500 * time.Millisecond)
	cancel()
	cancelled := time.Now()
	select {
	case o := <-done:
		t.Logf("the cell returned %v after the interrupt", time.Since(cancelled).Round(time.Millisecond))
		if o.err == nil || ctx.Err() == nil {
			t.Errorf("cell ended with %v; want the interrupt", o.err)
		}
		if o.res.Acquires == 0 {
			t.Errorf("the acquisitions before the freeze were lost: %+v", o.res.Cell)
		}
	case <-time.After(30 * time.Second): // a hang guard, not a speed claim
		t.Fatal("the cell did not end after the interrupt with its server frozen")
	}
}
