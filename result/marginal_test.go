package result

import (
	"math"
	"testing"
)

// burst is a burst cell of n clients whose repeats cost the servers
// fixed µs once and per µs a hand-off, plus noise (µs per hand-off).
func burst(n int, fixed, per float64, noise ...float64) Cell {
	c := Cell{Impl: "zk-naive", Scenario: "burst", Kind: KindBurst, Clients: n}
	h := float64(n - 1)
	for _, e := range noise {
		c.RepeatServerCPUUs = append(c.RepeatServerCPUUs, (fixed+per*h)/h+e)
	}
	return c
}

func TestMarginalCPU(t *testing.T) {
	// 20 ms of set-up and a first compile per burst, 50 µs a hand-off: the
	// bursts' own figures read 2,907 µs at 8 and 207 µs at 128; the slope
	// is the hand-off's own 50.
	cells := []Cell{burst(8, 20000, 50, 0, 0, 0), burst(32, 20000, 50, 0, 0), burst(128, 20000, 50, 0, 0)}
	e := MarginalCPU(cells)
	if e == nil || math.Abs(e.Point-50) > 1e-9 || math.Abs(e.Low-50) > 1e-6 || math.Abs(e.High-50) > 1e-6 {
		t.Fatalf("marginal %+v, want exactly 50 with no spread", e)
	}
	// With noise the interval widens around the slope and covers it.
	cells = []Cell{burst(8, 20000, 50, 3, -2, 1), burst(32, 20000, 50, -1, 2), burst(128, 20000, 50, 0.5, -0.5)}
	e = MarginalCPU(cells)
	if e == nil || e.Method != MethodOLS || !(e.Low < 50 && 50 < e.High) || e.High-e.Low > 10 {
		t.Errorf("noisy marginal %+v, want an interval around 50", e)
	}
	// One size gives no slope; two sizes once each a point without an interval.
	if e := MarginalCPU([]Cell{burst(32, 0, 50, 0, 1)}); e != nil {
		t.Errorf("one size: %+v, want none", e)
	}
	if e := MarginalCPU([]Cell{burst(8, 700, 10, 0), burst(32, 700, 10, 0)}); e == nil || math.Abs(e.Point-10) > 1e-9 || e.HasInterval() {
		t.Errorf("two points: %+v, want 10 without an interval", e)
	}
}
