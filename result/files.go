package result

import (
	"fmt"
	"os"
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

// CellsDir is the folder of a results directory that holds the cells'
// files, a folder per implementation (cells/zk-pred/burst_c128.hlog),
// so that a run of twenty rows is browsed by row rather than as hundreds
// of files beside summary.json. Results written before it kept them
// flat beside summary.json (zk-pred_burst_c128.hlog), and read as they
// are.
const CellsDir = "cells"

// CellRel is the path, relative to results directory dir, of cell c's
// file with extension ext: in CellsDir, unless dir holds the cell flat
// (its interval log, or this very file, beside summary.json and not in
// CellsDir) as results from before it did — a re-render of an old
// directory keeps to its layout.
func CellRel(dir string, c Cell, ext string) string {
	base := filepath.Join(CellsDir, FileSafe(c.Impl), fmt.Sprintf("%s_c%d", FileSafe(c.Scenario), c.Clients))
	for _, e := range []string{ext, HlogExt} {
		if exists(filepath.Join(dir, CellFile(c)+e)) && !exists(filepath.Join(dir, base+e)) {
			return CellFile(c) + ext
		}
	}
	return base + ext
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// CellPath is the path of cell c's file with extension ext in results
// directory dir (see CellRel).
func CellPath(dir string, c Cell, ext string) string {
	return filepath.Join(dir, CellRel(dir, c, ext))
}

// CreateCellPath is CellPath for a file about to be written: it makes the
// cell's folder.
func CreateCellPath(dir string, c Cell, ext string) (string, error) {
	p := CellPath(dir, c, ext)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("result: %w", err)
	}
	return p, nil
}

// PartialExt is added to a cell file's name while it is being written: a
// cell's .hlog and .grants take their own names only when whole (see
// hlog.Writer.Close), so a process killed mid-cell or a full disk leaves a
// file that can never be taken for a finished cell's.
const PartialExt = ".partial"
