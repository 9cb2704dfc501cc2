package redispubsub_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/sandboxtest"
)

const fencedName = "redis-fenced"

func TestFencedConformance(t *testing.T) {
	d, ok := impl.Lookup(fencedName)
	if !ok {
		t.Fatalf("driver %s not registered", fencedName)
	}
	impltest.Run(t, d, sandboxtest.Start(t, d.Needs...), impltest.Options{})
}

// RFencedLock's tokens come back with the grant and grow with grant
// order: a hot cell of eight clients (two grants at least, however busy
// the machine) sees no token out of order, no
// overlap, a history that is linearizable with the lock's own tokens, and
// the token keys go with the cell's cleanup.
func TestFencedTokensGrowWithGrants(t *testing.T) {
	d, _ := impl.Lookup(fencedName)
	srv := sandboxtest.Start(t, d.Needs...)
	hot, _ := engine.LookupScenario("hot")
	cell, err := engine.RunCell(context.Background(), engine.CellSpec{Impl: fencedName, Scenario: hot, Clients: 8,
		Duration: 800 * time.Millisecond, Config: impl.Config{Servers: srv, Namespace: "fenced-" + t.Name()}})
	if err != nil {
		t.Fatal(err)
	}
	s := cell.Safety
	if cell.Acquires < 2 || cell.SafetyViolations != 0 || s == nil || s.Linearizable != "linearizable" || s.Tokens != "lock" {
		t.Fatalf("%d acquisitions, %d violations, safety %+v", cell.Acquires, cell.SafetyViolations, s)
	}
	var fenced int
	for _, op := range cell.History.Ops {
		if op.Fenced {
			fenced++
		}
	}
	if int64(fenced) < cell.Acquires {
		t.Errorf("%d grants carried a token, of %d acquisitions", fenced, cell.Acquires)
	}
	if n, err := d.Residue(context.Background(), srv, "fenced-"+t.Name()); err != nil || n != 0 {
		t.Errorf("%d keys left (%v)", n, err)
	}
}
