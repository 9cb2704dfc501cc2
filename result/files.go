package result

import (
	"fmt"
	"path/filepath"
	"strings"
)

// The data files of a results directory: a run writes meta.json,
// summary.json and one .hlog per cell; everything else is rendered from
// them (package report), so a report can be redone without running.
const (
	MetaFile    = "meta.json"
	SummaryFile = "summary.json"
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
	// TagAbandon is the wait of acquisitions given up (--acquire-timeout,
	// the abandon scenario), TagRenew the latency of lease renewals
	// (--renew).
	TagAbandon = "abandon"
	TagRenew   = "renew"
)

// CellFile is the base name (no extension) of a cell's files, e.g.
// "zk-pred_burst_c128". It is safe as a file name on every system.
func CellFile(c Cell) string {
	return fmt.Sprintf("%s_%s_c%d", FileSafe(c.Impl), FileSafe(c.Scenario), c.Clients)
}

// FileSafe replaces every character but letters, digits, '-' and '.' by '-'.
func FileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '-'
	}, s)
}

// CellPath is the path of a cell's file with extension ext in dir.
func CellPath(dir string, c Cell, ext string) string {
	return filepath.Join(dir, CellFile(c)+ext)
}
