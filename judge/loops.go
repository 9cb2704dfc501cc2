package judge

import (
	"slices"

	"github.com/lockbench/lockbench/result"
)

// Throughput is one lock's loops under one scenario: its best rate and,
// at its largest client count, what each acquisition cost.
type Throughput struct {
	Impl, Scenario string
	// Measured is false when no cell acquired anything.
	Measured bool
	// Best is the cell with the highest rate.
	Best     CellRef
	BestPerS float64
	BestP99  float64 // µs
	// Largest is the most clients that acquired anything; Wake and
	// Retries are per acquisition there (Wake nil when nothing woke).
	Largest int
	Wake    *result.WakeFigures
	Retries float64
	Errors  int64
}

func throughput(cells []result.Cell) []Throughput {
	var out []Throughput
	for _, g := range result.GroupCells(cells) {
		if k := g.Cells[0].KindOf(); k != result.KindClosed && k != result.KindOpen {
			continue
		}
		t := Throughput{Impl: g.Impl, Scenario: g.Scenario, Errors: errorsOf(g.Cells)}
		for _, c := range g.Cells {
			if c.Acquires > 0 && (!t.Measured || c.AcquiresPerS > t.BestPerS) {
				t.Measured, t.Best, t.BestPerS, t.BestP99 = true, Ref(c), c.AcquiresPerS, c.AcquireLatencyUs.P99
			}
		}
		if last, ok := largestMeasured(g.Cells); ok {
			t.Largest, t.Wake, t.Retries = last.Clients, last.Wake, last.RetriesPerAcquire
		}
		out = append(out, t)
	}
	return out
}

// Gap is what a hand-off costs each lock in time: the hand-off gap (a
// holder's release call to the next grant) at the most clients of its
// contended loop cells. The p90 tells a gap that waits for something
// besides the network (etcd's mutex waiting for the server's 100 ms
// catch-up of unsynced watches) from one that does not.
type Gap struct {
	Rows []GapRow
	// Slow and Fast index Rows by p90; Times is their ratio, set only at
	// GapRatioShown or more.
	Slow, Fast int
	Times      float64
}

// GapRow is one lock's gap.
type GapRow struct {
	CellRef
	P50, P90 float64 // µs
}

// GapRatioShown is the ratio of the slowest to the fastest p90 gap worth
// naming.
const GapRatioShown = 3

func gap(cells []result.Cell) *Gap {
	var g Gap
	at := map[string]int{}
	for _, c := range cells {
		if c.Open != nil || c.Faults != nil || c.Clients < 2 || c.HandoffGapUs == nil || c.HandoffGapUs.P50 <= 0 {
			continue
		}
		row := GapRow{Ref(c), c.HandoffGapUs.P50, c.HandoffGapUs.P90}
		i, ok := at[c.Impl]
		switch {
		case !ok:
			at[c.Impl] = len(g.Rows)
			g.Rows = append(g.Rows, row)
		case c.Clients > g.Rows[i].Clients:
			g.Rows[i] = row
		}
	}
	if len(g.Rows) == 0 {
		return nil
	}
	idx := make([]int, len(g.Rows))
	for i := range idx {
		idx[i] = i
	}
	byP90 := func(a, b int) int { return cmpF(g.Rows[a].P90, g.Rows[b].P90) }
	g.Slow, g.Fast = slices.MaxFunc(idx, byP90), slices.MinFunc(idx, byP90)
	if r := g.Rows[g.Slow].P90 / g.Rows[g.Fast].P90; len(g.Rows) > 1 && r >= GapRatioShown {
		g.Times = r
	}
	return &g
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// BestTried is, for one scenario, the most clients and acquisitions a
// second each lock served within the SLO among the client counts the run
// tried — not its capacity, which `lockbench capacity` searches for.
type BestTried struct {
	Scenario string
	Rows     []BestTriedRow
	// Best indexes the row that served most within the SLO; -1 when
	// none met it.
	Best int
}

// BestTriedRow is one lock's best client count tried.
type BestTriedRow struct {
	result.CapacityRow
	// AtLargest says the best was the largest count tried, missed by
	// none: the lock may serve more.
	AtLargest bool
}

// NoneMet says no lock met the SLO at any count tried.
func (b BestTried) NoneMet() bool { return b.Best < 0 }

func bestTried(cells []result.Cell, slo result.SLO) []BestTried {
	var loops []result.Cell
	for _, c := range cells {
		if k := c.KindOf(); k == result.KindClosed || k == result.KindOpen {
			loops = append(loops, c)
		}
	}
	var out []BestTried
	at := map[string]int{}
	for _, r := range Capacity(loops, slo) {
		i, ok := at[r.Scenario]
		if !ok {
			i = len(out)
			at[r.Scenario] = i
			out = append(out, BestTried{Scenario: r.Scenario, Best: -1})
		}
		b := &out[i]
		row := BestTriedRow{CapacityRow: r, AtLargest: r.Met && r.Clients == slices.Max(r.Tested) && r.FirstMissed == 0}
		b.Rows = append(b.Rows, row)
		if r.Met && (b.Best < 0 || r.AcquiresPerS > b.Rows[b.Best].AcquiresPerS) {
			b.Best = len(b.Rows) - 1
		}
	}
	return out
}

// Open is, per lock, whether its open loop kept up with the offered rate
// and, if not, at which client count it first fell behind.
type Open struct{ Rows []OpenRow }

// Bad says some lock fell behind.
func (o Open) Bad() bool {
	for _, r := range o.Rows {
		if r.Saturated {
			return true
		}
	}
	return false
}

// OpenRow is one lock's open loop: the first cell that fell behind when
// Saturated, else the largest.
type OpenRow struct {
	CellRef
	Saturated bool
	Figures   result.OpenLoop
	AcqPerS   float64
	P99       float64 // µs, from the intended start
}

// Saturated says an open-loop cell fell behind its offered rate: it
// dropped or left arrivals unserved, or served under KeptUp of it.
func Saturated(c result.Cell) bool {
	o := c.Open
	return o != nil && (o.Dropped > 0 || o.Unfinished > 0 || c.AcquiresPerS < KeptUp*o.Rate)
}

// KeptUp is the share of the offered rate an open loop must serve.
const KeptUp = 0.95

func openLoop(cells []result.Cell) *Open {
	var o Open
	for _, g := range result.GroupCells(cells) {
		if g.Cells[0].KindOf() != result.KindOpen || g.Cells[0].Open == nil {
			continue
		}
		pick := g.Cells[len(g.Cells)-1]
		sat := false
		for _, c := range g.Cells {
			if Saturated(c) {
				pick, sat = c, true
				break
			}
		}
		if pick.Open == nil {
			continue
		}
		o.Rows = append(o.Rows, OpenRow{CellRef: Ref(pick), Saturated: sat, Figures: *pick.Open,
			AcqPerS: pick.AcquiresPerS, P99: pick.AcquireLatencyUs.P99})
	}
	if len(o.Rows) == 0 {
		return nil
	}
	return &o
}
