package report

import (
	"fmt"
	"strings"
)

// The files of a results directory. Run writes the data files (meta.json,
// summary.json and one .hlog per cell); everything else is rendered from
// them by Render, so `lockbench report DIR` can redo it without running.
const (
	MetaFile    = "meta.json"
	SummaryFile = "summary.json"
)

// The files Render writes into a results directory, beside one
// <CellFile>.hgrm per cell that has an .hlog.
const (
	CSVFile      = "summary.csv"
	BenchFile    = "bench.txt"
	MarkdownFile = "summary.md"
	HTMLFile     = "report.html"
	PlotsDir     = "plots"
)

// Extensions of a cell's files: its interval log (written by run) and its
// percentile spectrum (rendered from the log).
const (
	HlogExt = ".hlog"
	HgrmExt = ".hgrm"
)

// Tags of the interval histograms in a cell's .hlog: acquire latency,
// release latency, and (where measured) the hand-off gap.
const (
	TagAcquire = "acquire"
	TagRelease = "release"
	TagHandoff = "handoff"
	// TagService is the open loop's acquire latency from the actual start
	// (its "acquire" counts from the intended arrival).
	TagService = "service"
)

// CellFile is the base name (no extension) of a cell's files, e.g.
// "zk-pred_burst_c128". It is safe as a file name on every system.
func CellFile(c Cell) string {
	return fmt.Sprintf("%s_%s_c%d", fileSafe(c.Impl), fileSafe(c.Scenario), c.Clients)
}

// fileSafe replaces every character but letters, digits, '-' and '.' by '-'.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '-'
	}, s)
}
