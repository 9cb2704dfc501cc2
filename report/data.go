package report

import "github.com/lockbench/lockbench/results"

// The result data this package renders; its types and files belong to
// package results, which writes and reads them.
type (
	Cell        = results.Cell
	Summary     = results.Summary
	Latency     = results.Latency
	CapacityRow = results.CapacityRow
	SLO         = results.SLO
	CellLog     = results.CellLog
	cellGroup   = results.Group
)

// The files Render writes into a results directory, beside the data files
// results.MetaFile, results.SummaryFile and one .hlog per cell.
const (
	CSVFile      = "summary.csv"
	BenchFile    = "bench.txt"
	MarkdownFile = "summary.md"
	HTMLFile     = "report.html"
	PlotsDir     = "plots"
)

func isBurst(c Cell) bool { return c.KindOf() == results.KindBurst }
func isFault(c Cell) bool { return c.KindOf() == results.KindFault }

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
