package report

import (
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// The result data this package renders; its types and files belong to
// package result, which writes and reads them.
type (
	Cell        = result.Cell
	Summary     = result.Summary
	Latency     = result.Latency
	CapacityRow = result.CapacityRow
	SLO         = result.SLO
	CellLog     = hlog.CellLog
	CellDigest  = hlog.Digest
	cellGroup   = result.Group
)

// The files Render writes into a results directory, beside the data files
// result.MetaFile, result.SummaryFile and one .hlog per cell.
const (
	CSVFile      = "summary.csv"
	BenchFile    = "bench.txt"
	MarkdownFile = "summary.md"
	HTMLFile     = "report.html"
	PlotsDir     = "plots"
)

func isBurst(c Cell) bool { return c.KindOf() == result.KindBurst }
func isFault(c Cell) bool { return c.KindOf() == result.KindFault }

// leavingQueue reports whether c drained a queue that waiters left (the
// abandon scenario): its wake-ups follow no burst curve.
func leavingQueue(c Cell) bool { return c.Abandon != nil && len(c.Abandon.Granted) > 0 }

// closedLoops keeps the cells that are not bursts: a burst's rate is set
// by its hold time and hand-offs, and would flatten the others' curves.
func closedLoops(cells []Cell) []Cell {
	var out []Cell
	for _, c := range cells {
		if !isBurst(c) {
			out = append(out, c)
		}
	}
	return out
}

// largestMeasured is the cell with the most clients among those that
// acquired anything (cells by ascending client count).
func largestMeasured(cells []Cell) (Cell, bool) {
	for i := len(cells) - 1; i >= 0; i-- {
		if cells[i].Acquires > 0 {
			return cells[i], true
		}
	}
	return Cell{}, false
}
