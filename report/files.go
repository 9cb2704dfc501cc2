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

// Tags of the interval histograms in a cell's .hlog: acquire latency,
// release latency, and (where measured) the hand-off gap.
const (
	TagAcquire = "acquire"
	TagRelease = "release"
	TagHandoff = "handoff"
)

// CellFile is the base name (no extension) of a cell's files, e.g.
// "zk-pred_burst_c128". It is safe as a file name on every system.
func CellFile(c Cell) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
				return r
			}
			return '-'
		}, s)
	}
	return fmt.Sprintf("%s_%s_c%d", clean(c.Impl), clean(c.Scenario), c.Clients)
}
