package judge

import (
	"math"
	"slices"

	"github.com/lockbench/lockbench/result"
)

// Herd is the herd's cost per hand-off from bursts: a row per lock at its
// largest burst, the dearest and the cheapest by server CPU per hand-off,
// and how many times the most waking lock's wake-ups the least waking's.
type Herd struct {
	Rows []HerdRow
	// Dearest and Cheapest index Rows by server CPU per hand-off; -1
	// when no row knows its servers' CPU.
	Dearest, Cheapest int
	Ratio             *WakeRatio
}

// HerdRow is one lock's cost per hand-off at its largest burst.
type HerdRow struct {
	CellRef
	Cost result.HandoffCost
	// Theory checks the burst's wake-ups against theory; nil without one.
	Theory *TheoryCheck
	// RepeatCPU is a repeated burst's spread of server CPU per hand-off
	// over its repeats; nil with fewer than two.
	RepeatCPU *Range
	// TimesCheapest is server CPU per hand-off over the cheapest lock's.
	TimesCheapest *float64
	// GrowthWakeups and GrowthCPU are the fitted exponents of n over the
	// lock's bursts, each only where its interval is known (three client
	// counts or more): an exponent without one is not shown at all.
	GrowthWakeups, GrowthCPU *result.Growth
	Server                   *ServerCheck
}

// TheoryCheck is a burst's wake-ups against theory. A burst makes the
// count exact, so Exact is equality and anything else is off, however near.
type TheoryCheck struct {
	PerHandoff float64
	Formula    string
	Got, Want  int64
	Exact      bool
}

// Range is a spread over N values.
type Range struct {
	Min, Max float64
	N        int
}

// ServerCheck is what the server counted of the watches it fired, against
// what the clients received.
type ServerCheck struct {
	Fired int64
	// Received is what the clients counted; nil when they did not.
	Received *int64
	// Sharded says the cell is a shard's: the server fired for every
	// shard, the merge checks the totals.
	Sharded bool
	// Internal says the lock's waiters wait inside the server (its theory
	// is result.Theory.OnServer): the watches fired woke the server's own
	// waiters, and no client is meant to receive them.
	Internal bool
}

// Agrees says every watch fired was received.
func (s ServerCheck) Agrees() bool { return s.Received != nil && *s.Received == s.Fired }

// WakeRatio is how many times the most waking lock's wake-ups per
// hand-off the least waking's, at up to UpTo clients; only where they
// differ by half or more.
type WakeRatio struct {
	Hi, Lo string
	Times  float64
	UpTo   int
}

func herd(cells []result.Cell) *Herd {
	var h Herd
	ns := map[int][]float64{}
	wakes, cpus := map[int][]float64{}, map[int][]float64{}
	for _, g := range result.GroupCells(result.WithoutFaults(cells)) {
		if g.Cells[0].KindOf() != result.KindBurst {
			continue
		}
		i := len(h.Rows)
		for _, c := range g.Cells {
			if c.Handoff == nil || leavingQueue(c) {
				continue
			}
			row := HerdRow{CellRef: Ref(c), Cost: *c.Handoff, Theory: theoryCheck(c), Server: ServerCount(c)}
			if r := c.RepeatServerCPUUs; len(r) >= 2 {
				row.RepeatCPU = &Range{Min: slices.Min(r), Max: slices.Max(r), N: len(r)}
			}
			if len(h.Rows) == i {
				h.Rows = append(h.Rows, row)
			} else {
				h.Rows[i] = row
			}
			ns[i] = append(ns[i], float64(c.Clients))
			wakes[i] = append(wakes[i], c.Handoff.Wakeups)
			cpu := math.NaN()
			if c.Handoff.ServerCPUUs != nil {
				cpu = *c.Handoff.ServerCPUUs
			}
			cpus[i] = append(cpus[i], cpu)
		}
	}
	if len(h.Rows) == 0 {
		return nil
	}
	h.Dearest, h.Cheapest = -1, -1
	for i, r := range h.Rows {
		h.Rows[i].GrowthWakeups = growth(ns[i], wakes[i])
		h.Rows[i].GrowthCPU = growth(ns[i], cpus[i])
		cpu := r.Cost.ServerCPUUs
		if cpu == nil {
			continue
		}
		if h.Cheapest < 0 || *cpu < *h.Rows[h.Cheapest].Cost.ServerCPUUs {
			h.Cheapest = i
		}
		if h.Dearest < 0 || *cpu > *h.Rows[h.Dearest].Cost.ServerCPUUs {
			h.Dearest = i
		}
	}
	if h.Cheapest >= 0 {
		if lo := *h.Rows[h.Cheapest].Cost.ServerCPUUs; lo > 0 {
			for i, r := range h.Rows {
				if r.Cost.ServerCPUUs != nil {
					x := *r.Cost.ServerCPUUs / lo
					h.Rows[i].TimesCheapest = &x
				}
			}
		}
	}
	per := map[string]float64{}
	upTo := 0
	for _, r := range h.Rows {
		if r.Cost.Theory != nil && *r.Cost.Theory > 0 {
			per[r.Impl] = r.Cost.Wakeups
			upTo = max(upTo, r.Clients)
		}
	}
	h.Ratio = wakeRatio(per, upTo)
	return &h
}

// growth is the fitted exponent of n, nil unless its interval is known.
func growth(ns, ys []float64) *result.Growth {
	g, ok := result.FitGrowth(ns, ys)
	if !ok || math.IsNaN(g.Low) {
		return nil
	}
	return &g
}

// theoryCheck is a burst's release wake-ups against theory. A cell with a
// theory is judged by release wake-ups alone, even at 0: every driver
// with a theory counts them, so 0 there is a broken counter, and falling
// back to another count would hide it behind a ✓. A server-side queue
// (theory 0) is off at any notification or wake-up at all.
func theoryCheck(c result.Cell) *TheoryCheck {
	t := c.TheoryOf()
	if t == nil || c.Handoff == nil || c.Handoff.Theory == nil {
		return nil
	}
	n := c.ReleaseWakeups
	want := t.BurstWakeups(c.Clients) * int64(max(c.Repeats, 1))
	if c.TheoryWakeups != nil {
		want = *c.TheoryWakeups
	}
	if want == 0 {
		n += c.Notifications + c.WastedWakeups
	}
	return &TheoryCheck{PerHandoff: *c.Handoff.Theory, Formula: t.Formula, Got: n, Want: want, Exact: n == want}
}

// ServerCount is what the server counted of the watches it fired against
// what the clients received; nil when the server kind counts none.
func ServerCount(c result.Cell) *ServerCheck {
	sc := c.ServerCounts
	if sc == nil || sc.Watches == nil {
		return nil
	}
	received := sc.ClientNotifications
	return &ServerCheck{Fired: *sc.Watches, Received: &received, Sharded: c.Shard != nil, Internal: c.Theory.OnServer()}
}

// wakeRatio compares the most and the least waking of per (by name, the
// first name on a tie); nil with fewer than two, or unless the most wakes
// at least half again as many.
func wakeRatio(per map[string]float64, upTo int) *WakeRatio {
	if len(per) < 2 {
		return nil
	}
	var names []string
	for k := range per {
		names = append(names, k)
	}
	slices.Sort(names)
	hi, lo := names[0], names[0]
	for _, k := range names {
		if per[k] > per[hi] {
			hi = k
		}
		if per[k] < per[lo] {
			lo = k
		}
	}
	if per[lo] <= 0 || per[hi] < 1.5*per[lo] {
		return nil
	}
	return &WakeRatio{Hi: hi, Lo: lo, Times: per[hi] / per[lo], UpTo: upTo}
}

// LoopHerd is the herd judged from closed loops: release wake-ups per
// acquisition at the largest client count on one lock, against one
// hand-off's with the other n−1 clients waiting.
type LoopHerd struct {
	Rows  []LoopHerdRow
	Ratio *WakeRatio
}

// LoopHerdRow is one lock's closed loop at its largest client count.
type LoopHerdRow struct {
	CellRef
	Wake result.WakeFigures
	// Within says the figure is within LoopTolerance of theory; OffBy
	// is by how much it is off, as a share of theory.
	Within bool
	OffBy  float64
	Server *ServerCheck
}

// LoopTolerance is how near theory a closed loop's wake-ups per
// acquisition count as agreeing: arrivals and departures of waiters
// between hand-offs move them, unlike a burst's exact count.
const LoopTolerance = 0.05

func loopHerd(cells []result.Cell) *LoopHerd {
	var h LoopHerd
	per := map[string]float64{}
	upTo := 0
	for _, g := range result.GroupCells(result.WithoutFaults(cells)) {
		if g.Cells[0].KindOf() != result.KindClosed {
			continue
		}
		c, ok := largestMeasured(g.Cells)
		if !ok || c.Locks > 1 || c.Clients < 2 || c.TheoryOf() == nil || c.Wake == nil || c.Wake.TheoryPerHandoff == nil {
			continue
		}
		w, want := *c.Wake, *c.Wake.TheoryPerHandoff
		row := LoopHerdRow{CellRef: Ref(c), Wake: w, Server: ServerCount(c), Within: true}
		if want > 0 {
			row.OffBy = (w.PerAcquire - want) / want
			row.Within = math.Abs(row.OffBy) <= LoopTolerance
		}
		h.Rows = append(h.Rows, row)
		per[c.Impl] = w.PerAcquire
		upTo = max(upTo, c.Clients)
	}
	if len(h.Rows) == 0 {
		return nil
	}
	h.Ratio = wakeRatio(per, upTo)
	return &h
}
