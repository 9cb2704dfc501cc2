package engine

import (
	"context"
	"os"
	"runtime/debug"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
)

// The collection comes HeapHeadroom past the live heap, never sooner than
// Go's default would make it, and never later for a minimum heap.
func TestHeadroomPercent(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 1600}, {1 * mib, 1600}, {4 * mib, 1600}, {16 * mib, 400}, {32 * mib, 200},
		{64 * mib, 100}, {1 << 30, 100}, {48 * mib, 134},
	} {
		if got := headroomPercent(tc.live); got != tc.want {
			t.Errorf("live %d MiB: GOGC %d, want %d", tc.live/mib, got, tc.want)
		}
	}
	for live := uint64(minHeap); live < 2*HeapHeadroom; live += 3 * mib {
		p := headroomPercent(live)
		goal := float64(live) * (1 + float64(p)/100)
		if goal < float64(live+HeapHeadroom) && p != 100 || goal > float64(live+HeapHeadroom)+float64(live)/100 && p != 100 {
			t.Errorf("live %d MiB: GOGC %d puts the collection at %.1f MiB, want %d MiB", live/mib, p, goal/mib, (live+HeapHeadroom)/mib)
		}
		if minimum := float64(minHeap) * float64(p) / 100; minimum > float64(live+HeapHeadroom)+mib {
			t.Errorf("live %d MiB: GOGC %d makes Go's minimum heap %.0f MiB", live/mib, p, minimum/mib)
		}
	}
}

// gcPercent reads the collector's percent.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// Cells that overlap share the raised percent; the one in force before
// the first is back after the last.
func TestGCHeadroomRaisedAndRestored(t *testing.T) {
	if v, ok := os.LookupEnv("GOGC"); ok {
		os.Unsetenv("GOGC")
		t.Cleanup(func() { os.Setenv("GOGC", v) })
	}
	defer debug.SetGCPercent(debug.SetGCPercent(73))
	raiseGC()
	raised := gcPercent()
	if raised < 100 || raised == 73 {
		t.Fatalf("GOGC %d while a cell runs, want the headroom's, at least 100", raised)
	}
	raiseGC() // a second cell
	adjustGC()
	if p := lowerGC(); p < 100 || gcPercent() != p {
		t.Errorf("first cell out: it ran under %d, GOGC now %d; want the raised percent to stand", p, gcPercent())
	}
	if p := lowerGC(); p < 100 {
		t.Errorf("last cell ran under GOGC %d, want at least 100", p)
	}
	if p := gcPercent(); p != 73 {
		t.Errorf("GOGC %d after the last cell, want 73 back", p)
	}
}

// A GOGC set in the environment stands.
func TestGCHeadroomLeavesGOGCSet(t *testing.T) {
	t.Setenv("GOGC", "73")
	defer debug.SetGCPercent(debug.SetGCPercent(73))
	raiseGC()
	adjustGC()
	if p := gcPercent(); p != 73 {
		t.Errorf("GOGC %d while a cell runs, want the environment's 73", p)
	}
	if p := lowerGC(); p != 0 || gcPercent() != 73 {
		t.Errorf("cell reports GOGC %d and leaves %d, want 0 (not ours) and 73", p, gcPercent())
	}
}

// An open loop's summary says the percent its collector ran under; a
// closed loop keeps Go's default and says none.
func TestOpenLoopReportsGCPercent(t *testing.T) {
	if v, ok := os.LookupEnv("GOGC"); ok {
		os.Unsetenv("GOGC")
		t.Cleanup(func() { os.Setenv("GOGC", v) })
	}
	before := gcPercent()
	for _, tc := range []struct {
		scenario string
		rate     float64
		raised   bool
	}{{"rate", 200, true}, {"hot", 0, false}} {
		res, err := RunCellDetail(context.Background(), CellSpec{
			Impl: "inproc", Scenario: scenario(t, tc.scenario), Clients: 2, Duration: 200 * time.Millisecond, Rate: tc.rate,
			Warmup: 50 * time.Millisecond, Hold: 100 * time.Microsecond, Config: impl.Config{Namespace: t.Name()},
		})
		if err != nil {
			t.Fatal(err)
		}
		g := res.Cell.Generator
		if g == nil || tc.raised && g.GCPercent < 100 || !tc.raised && g.GCPercent != 0 {
			t.Errorf("%s: generator %+v: want gc_percent of at least 100: %v", tc.scenario, g, tc.raised)
		}
		if p := gcPercent(); p != before {
			t.Errorf("%s: GOGC %d after the cell, want %d back", tc.scenario, p, before)
		}
	}
}
