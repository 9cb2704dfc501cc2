package result_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// A run keeps its cells' files in a folder per implementation; a results
// directory from before keeps them flat beside summary.json, and both
// read back.
func TestCellFilesLayout(t *testing.T) {
	t.Parallel()
	c := result.Cell{Impl: "zk-pred", Scenario: "burst", Clients: 128}
	dir := t.TempDir()
	h := hdrhistogram.New(1, 60_000_000, 3)
	h.RecordValue(1500)
	start := time.Now()
	if err := hlog.WriteCell(dir, c, start, []hlog.Interval{{Start: start, End: start.Add(time.Second), Acquire: h}}, "test"); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "cells", "zk-pred", "burst_c128.hlog")
	if _, err := os.Stat(want); err != nil {
		t.Fatalf("the log is not in its implementation's folder: %v", err)
	}
	if got := result.CellPath(dir, c, result.HlogExt); got != want {
		t.Errorf("CellPath %s, want %s", got, want)
	}
	if l, err := hlog.ReadCell(dir, c); err != nil || l.Merged(result.TagAcquire).TotalCount() != 1 {
		t.Errorf("reading it back: %v", err)
	}

	old := t.TempDir()
	flat := filepath.Join(old, "zk-pred_burst_c128.hlog")
	if err := os.Rename(want, flat); err != nil {
		t.Fatal(err)
	}
	if got := result.CellRel(old, c, result.HlogExt); got != "zk-pred_burst_c128.hlog" {
		t.Errorf("a flat results directory's log: %s", got)
	}
	if l, err := hlog.ReadCell(old, c); err != nil || l.Merged(result.TagAcquire).TotalCount() != 1 {
		t.Errorf("reading a flat results directory: %v", err)
	}
	// What a re-render adds to an old directory keeps to its layout.
	if got := result.CellRel(old, c, result.HgrmExt); got != "zk-pred_burst_c128.hgrm" {
		t.Errorf("a new file in an old directory: %s", got)
	}
}
