package result

import (
	"math"
	"testing"
)

// A watch-all herd wakes n/2 waiters per hand-off on average (n(n−1)/2
// over n−1): exponent 1; a predecessor watch one: exponent 0. Exact
// points give an interval of zero width around them; noisy ones an
// interval that holds the true exponent.
func TestFitGrowth(t *testing.T) {
	ns := []float64{8, 32, 128, 512}
	var herd, pred, noisy []float64
	for i, n := range ns {
		herd = append(herd, n*(n-1)/2/(n-1))
		pred = append(pred, 1)
		noisy = append(noisy, 5*n*[]float64{1.1, 0.9, 1.05, 0.97}[i])
	}
	for _, tc := range []struct {
		name string
		ys   []float64
		want float64
	}{{"herd", herd, 1}, {"pred", pred, 0}, {"noisy", noisy, 1}} {
		g, ok := FitGrowth(ns, tc.ys)
		if !ok || g.Points != 4 {
			t.Fatalf("%s: %+v %v", tc.name, g, ok)
		}
		if math.Abs(g.Exponent-tc.want) > 0.05 || g.Low > tc.want || g.High < tc.want || g.Low > g.Exponent || g.High < g.Exponent {
			t.Errorf("%s: exponent %.3f [%.3f, %.3f], want about %v inside", tc.name, g.Exponent, g.Low, g.High, tc.want)
		}
	}
	if g, ok := FitGrowth([]float64{8, 32}, []float64{4, 16}); !ok || math.Abs(g.Exponent-1) > 1e-9 || !math.IsNaN(g.Low) {
		t.Errorf("two points: %+v %v, want exponent 1 and no interval", g, ok)
	}
	if _, ok := FitGrowth([]float64{8, 8}, []float64{4, 5}); ok {
		t.Error("one client count fitted")
	}
}

// A burst of 8 hands on 7 times: every total is shared over those 7; a
// closed loop and a burst on several locks have no cost per hand-off.
func TestHandoffCosts(t *testing.T) {
	theory := Theory{Waiters: "all watch all", Formula: "n(n−1)/2", Poly: [3]float64{0, -0.5, 0.5}}
	c := Cell{Impl: "zk-naive", Scenario: "burst", Kind: KindBurst, Clients: 8, Locks: 1, Acquires: 8,
		Counts: Counts{ReleaseWakeups: 28, Notifications: 35}, Theory: &theory,
		ServerCounts: &ServerCounts{Messages: 141, Unit: "packets"},
		Generator:    &Generator{CPUSeconds: 0.014, ServerCPUSeconds: map[string]float64{"a": 0.0035, "b": 0.0035}}}
	h, ok := HandoffCosts(c)
	if !ok || h.Handoffs != 7 || h.Wakeups != 4 || h.Notifications != 5 {
		t.Fatalf("%+v %v", h, ok)
	}
	if h.Theory == nil || *h.Theory != 4 || h.Messages == nil || *h.Messages != 141.0/7 || h.MessagesUnit != "packets" {
		t.Errorf("theory %v, messages %v %q", h.Theory, h.Messages, h.MessagesUnit)
	}
	if h.ServerCPUUs == nil || math.Abs(*h.ServerCPUUs-1000) > 1e-6 || h.GeneratorCPUUs == nil || math.Abs(*h.GeneratorCPUUs-2000) > 1e-6 {
		t.Errorf("server CPU %v µs, lockbench %v µs per hand-off, want 1000 and 2000", h.ServerCPUUs, h.GeneratorCPUUs)
	}
	// At rest the servers used 0.5 core over a 14 ms span: 1,000 µs per
	// hand-off of the 7,000 µs they used, 6,000 above it.
	idle, span := 0.5, 0.014
	c.Generator.ServerIdleCores, c.Generator.ServerSpanS = &idle, span
	if h, _ := HandoffCosts(c); h.ServerCPUUs == nil || math.Abs(*h.ServerCPUUs) > 1e-6 {
		t.Errorf("above idle %v µs, want 0", h.ServerCPUUs)
	}
	idle = 0.25
	if h, _ := HandoffCosts(c); h.ServerCPUUs == nil || math.Abs(*h.ServerCPUUs-500) > 1e-6 || *h.ServerCPUTotalUs != 1000 || *h.ServerIdleUs != 500 {
		t.Errorf("above idle %v µs of %v, idle %v: want 500 of 1000, 500", h.ServerCPUUs, h.ServerCPUTotalUs, h.ServerIdleUs)
	}
	idle = 0.75 // more at rest than in the cell: the background moved
	if h, _ := HandoffCosts(c); h.ServerCPUUs != nil || h.ServerCPUTotalUs == nil {
		t.Errorf("above idle %v µs with a rest rate over the cell's: want unknown, the total kept", h.ServerCPUUs)
	}
	c.Generator.ServerIdleCores = nil
	c.Generator.ServerCPUSeconds = nil
	if h, _ := HandoffCosts(c); h.ServerCPUUs != nil {
		t.Error("server CPU per hand-off without server CPU")
	}
	for _, bad := range []Cell{{Kind: KindClosed, Locks: 1, Acquires: 8}, {Kind: KindBurst, Locks: 4, Acquires: 8}, {Kind: KindBurst, Locks: 1, Acquires: 1},
		{Kind: KindBurst, Locks: 1, Acquires: 4, Abandon: &Abandon{Count: 3}}} {
		if _, ok := HandoffCosts(bad); ok {
			t.Errorf("a cost per hand-off for %+v", bad)
		}
	}
}
