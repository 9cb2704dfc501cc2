package engine

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// Rounds joins the rounds of one cell — each a whole run of it on
// connections of its own, run apart in time — into the cell they measured
// together: counts and the servers' counter deltas added, latency
// histograms merged from every round's intervals, CPU times added, and
// each timed figure's per-round values with their interval
// (result.RoundsOf). It is what RunRepeats and a plan's --repeat rounds
// share. Its methods are called from one goroutine, round after round.
type Rounds struct {
	acc    *result.Accumulator
	server *serverSum
	dists  map[string]*hdrhistogram.Histogram
	safety *result.Safety
	hist   *result.History
	marked result.Cell
	cells  []result.Cell
	base   result.Cell
}

// NewRounds starts joining rounds of the cell base names (its
// implementation, scenario, kind, theory, scenario figures); with a zero
// base, the first round added names it.
func NewRounds(base result.Cell) *Rounds {
	return &Rounds{acc: result.NewAccumulator(base), server: &serverSum{raw: map[string]int64{}}, dists: map[string]*hdrhistogram.Histogram{}, base: base}
}

// Spec is spec made to run as one round: once, its intervals' histograms
// feeding the join before they go on to spec.OnInterval as the cell's.
func (r *Rounds) Spec(spec CellSpec) CellSpec {
	spec.Repeat = 1
	spec.OnInterval = intervalsInto(r.acc, r.base.Scenario, spec.OnInterval)
	return spec
}

// Add adds a round's result; what it says of itself (cut short, a
// finding, counters unread) is said of the cell when no round before it
// said anything.
func (r *Rounds) Add(c result.Cell) { r.AddDetail(Result{Cell: c}) }

// AddDetail is Add with what a round's run returns beside its cell: the
// driver's own distributions, merged, and its history, appended under
// the round's number.
func (r *Rounds) AddDetail(res Result) {
	c := res.Cell
	mergeDistributions(r.dists, res.Distributions)
	r.safety, r.hist = r.safety.Add(c.Safety), r.hist.Append(c.History, uint16(len(r.cells)))
	if r.base.Impl == "" && len(r.cells) == 0 {
		r.acc.Rebase(c)
	}
	addRepeat(r.acc, r.server, c)
	r.cells = append(r.cells, c)
	if r.marked.Impl == "" && (c.Truncated != "" || c.Finding != "" || c.ServerNote != "") {
		r.marked = c
	}
}

// Each is every round added, in order.
func (r *Rounds) Each() []result.Cell { return r.cells }

// Cell is the joined cell, derived, with Rounds set from two rounds on.
func (r *Rounds) Cell() result.Cell {
	out := closeRepeats(r.acc, r.server, r.dists, r.marked)
	out.Safety, out.History = r.safety, r.hist
	out.Generator = sumGenerators(r.cells)
	out.Rounds = result.RoundsOf(r.cells)
	out.Derive()
	return out
}

// MergesRepeats says whether s runs CellSpec.Repeat > 1 itself, its
// repeats merged into one cell (a burst, a fault script); any other
// scenario is repeated by its caller in rounds, one cell each (Rounds).
func MergesRepeats(s Scenario) bool {
	if l, ok := s.(loadScenario); ok {
		return l.s.Repeatable
	}
	return s.Kind() == result.KindFault
}

// Interval feeds one closing interval's histograms of a round to the join,
// for a caller that routes the intervals of several cells itself (a
// ramp's stairs); Spec does it for a cell of its own.
func (r *Rounds) Interval(c result.Cell, start time.Time, iv hlog.Interval) {
	intervalsInto(r.acc, "", nil)(c, start, iv)
}
