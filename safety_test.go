package lockbench_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/sandboxtest"
)

// The checker must catch what it exists for: a Redis lock whose TTL runs
// out while the holder still works lets a second client in; the ZooKeeper
// recipe, whose grant lives as long as the session, does not.
func TestCheckerCatchesTTLShorterThanHold(t *testing.T) {
	hot, _ := lockbench.LookupScenario("hot")
	for _, tc := range []struct {
		impl   string
		unsafe bool
	}{{"redis", true}, {"zk-pred", false}} {
		t.Run(tc.impl, func(t *testing.T) {
			d, _ := impl.Lookup(tc.impl)
			srv := sandboxtest.Start(t, d.Needs...)
			cell, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
				Impl: tc.impl, Scenario: hot, Clients: 4, Duration: 1500 * time.Millisecond, Hold: 60 * time.Millisecond,
				ServerKinds: sandbox.Meter{},
				Config:      impl.Config{Servers: srv, Namespace: "ttl-" + t.Name(), TTL: 20 * time.Millisecond, Retry: 5 * time.Millisecond},
			})
			if err != nil {
				t.Fatal(err)
			}
			if !tc.unsafe {
				if cell.SafetyViolations != 0 || cell.Lost != 0 {
					t.Fatalf("%d violations, %d lost: %+v", cell.SafetyViolations, cell.Lost, cell.Violations)
				}
				return
			}
			if cell.SafetyViolations == 0 {
				t.Fatal("a 20 ms TTL under a 60 ms hold produced no violation")
			}
			if cell.Lost == 0 {
				t.Error("the expired holders' releases were not counted as lost")
			}
			v := cell.Violations[0]
			if v.Kind != "overlap" || v.Holder == v.Intruder || v.OverlapUs <= 0 {
				t.Errorf("violation %+v", v)
			}
		})
	}
}
