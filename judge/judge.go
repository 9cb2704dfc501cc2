package judge

import (
	"time"

	"github.com/lockbench/lockbench/result"
)

// DefaultSLO is what a run's best client count is judged against when it
// names no SLO: a p99 an interactive request can afford to wait for a lock.
var DefaultSLO = result.SLO{Quantile: "p99", Limit: 10 * time.Millisecond}

// Findings is everything a run's cells answer. A question the cells hold
// no data for is nil or empty.
type Findings struct {
	Safety     Safety
	Livelocks  []Livelock
	Throughput []Throughput
	// Herd is judged from bursts; LoopHerd, from closed loops, only when
	// the run has no burst to judge.
	Herd     *Herd
	LoopHerd *LoopHerd
	Gap      *Gap
	// SLO is what BestTried is judged against; DefaultSLOUsed says the
	// run named none.
	SLO            result.SLO
	DefaultSLOUsed bool
	BestTried      []BestTried
	Open           *Open
	Faults         []Fault
	Limit          *Limit
	// Rounds is what cells measured in rounds (--repeat) say: paired
	// ratios of rows side by side and the machine's noise.
	Rounds *Rounds
}

// CellRef names a cell.
type CellRef struct {
	Impl     string
	Scenario string
	Clients  int
}

// Ref is the cell's name.
func Ref(c result.Cell) CellRef {
	return CellRef{Impl: c.Impl, Scenario: c.Scenario, Clients: c.Clients}
}

// Count is a count in one cell.
type Count struct {
	CellRef
	N int64
}

// Judge judges cells against slo (DefaultSLO when nil).
func Judge(cells []result.Cell, slo *result.SLO) Findings {
	f := Findings{SLO: DefaultSLO, DefaultSLOUsed: slo == nil}
	if slo != nil {
		f.SLO = *slo
	}
	if len(cells) == 0 {
		return f
	}
	f.Safety = judgeSafety(cells)
	f.Livelocks = livelocks(cells)
	f.Throughput = throughput(cells)
	f.Herd = herd(cells)
	if f.Herd == nil {
		f.LoopHerd = loopHerd(cells)
	}
	f.Gap = gap(cells)
	f.BestTried = bestTried(cells, f.SLO)
	f.Open = openLoop(cells)
	f.Faults = faults(cells)
	f.Limit = limit(cells)
	f.Rounds = rounds(cells)
	return f
}

// largestMeasured is the cell with the most clients among those that
// acquired anything (cells by ascending client count).
func largestMeasured(cells []result.Cell) (result.Cell, bool) {
	for i := len(cells) - 1; i >= 0; i-- {
		if cells[i].Acquires > 0 {
			return cells[i], true
		}
	}
	return result.Cell{}, false
}

// leavingQueue says waiters left the queue (the abandon scenario): its
// wake-ups follow no burst curve.
func leavingQueue(c result.Cell) bool { return c.Abandon != nil && len(c.Abandon.Granted) > 0 }

func errorsOf(cells []result.Cell) int64 {
	var n int64
	for _, c := range cells {
		n += c.Errors
	}
	return n
}
