package result

import (
	"math"
	"testing"
)

func TestWaitCostOf(t *testing.T) {
	idle := 0.05 // cores at rest
	c := Cell{Kind: KindWait, Counts: Counts{RoundTrips: 2000, Retries: 1990, Notifications: 10},
		Wait:      &WaitFigures{Waiters: 4, WaitS: 5},
		Generator: &Generator{CPUSeconds: 0.4, ServerCPUSeconds: map[string]float64{"a": 0.3, "b": 0.1}, ServerIdleCores: &idle, ServerSpanS: 6}}
	w, ok := WaitCostOf(c)
	if !ok {
		t.Fatal("no cost")
	}
	// 20 waiter-seconds: 2,000 requests are 100 a second each; 0.4 s of
	// CPU 20,000 µs; the servers' 0.4 s less 0.3 s at rest, 5,000 µs.
	if w.Requests != 100 || w.Notifications != 0.5 || w.RetriesPerWaiterS != 99.5 || w.LockbenchCPUUs != 20000 ||
		w.ServerCPUUs == nil || math.Abs(*w.ServerCPUUs-5000) > 1e-6 {
		t.Errorf("cost %+v (server %v)", w, *w.ServerCPUUs)
	}
	c.Generator.ServerIdleCores = nil
	if w, _ := WaitCostOf(c); w.ServerCPUUs != nil {
		t.Error("server CPU above idle without an idle reading")
	}
	if _, ok := WaitCostOf(Cell{Kind: KindClosed}); ok {
		t.Error("a cost of waiting for a closed loop")
	}
}
