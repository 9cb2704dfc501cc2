package hlog

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/result"
)

// writeOldLog writes a cell's .hlog as lockbench did before it cut the
// last interval at the cell's end: every interval a whole second long,
// the last holding only the acquisitions of its first part.
func writeOldLog(t *testing.T, dir string, c result.Cell, perSecond []int64) {
	t.Helper()
	start := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	l, err := Create(dir, c, "test")
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range perSecond {
		h := result.NewHistogram()
		h.RecordValues(100, n)
		l.Write(start, Interval{Start: start.Add(time.Duration(i) * time.Second), Acquire: h})
	}
	if err := l.Close(start); err != nil {
		t.Fatal(err)
	}
}

func TestReadCellLogCutsTheLastIntervalAtTheCellsEnd(t *testing.T) {
	dir := t.TempDir()
	// 3.6 s at 1000/s: the last interval held 600 acquisitions in 0.6 s.
	c := result.Cell{Impl: "x", Scenario: "hot", Clients: 1, DurationS: 3.6}
	writeOldLog(t, dir, c, []int64{1000, 1000, 1000, 600})
	l, err := ReadCell(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	got := l.IntervalSamples(result.TagAcquire)
	if len(got) != 4 {
		t.Fatalf("%d samples, want 4: %+v", len(got), got)
	}
	last := got[3]
	if math.Abs(last.LengthS-0.6) > 1e-9 || math.Abs(last.PerS-1000) > 1e-6 || last.N != 600 {
		t.Errorf("last interval = %+v, want 0.6 s at 1000/s (not 600/s over a whole second)", last)
	}
	// 3.2 s: the last interval is a 0.2 s stub, too short to stand
	// beside whole seconds, and left out rather than shown as a dip.
	c.DurationS = 3.2
	writeOldLog(t, dir, c, []int64{1000, 1000, 1000, 200})
	l, err = ReadCell(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range l.IntervalStats(result.TagAcquire) {
		if s.PerS != 1000 {
			t.Errorf("interval at %.1fs: %.0f/s, want every interval at 1000/s", s.MidS, s.PerS)
		}
	}
}

// TestReadHlogRefusesALogCutAtALine cuts a closed log after each of its
// lines: every cut short of the whole is an error naming the file (without
// the end record, a cut after a whole interval line read as fewer
// intervals and no error), and the whole log reads as all it holds.
func TestReadHlogRefusesALogCutAtALine(t *testing.T) {
	dir := t.TempDir()
	c := result.Cell{Impl: "x", Scenario: "hot", Clients: 1, DurationS: 4}
	writeOldLog(t, dir, c, []int64{1000, 900, 800, 700})
	path := result.CellPath(dir, c, result.HlogExt)
	if _, err := os.Stat(path + result.PartialExt); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s%s still there after Close: %v", path, result.PartialExt, err)
	}
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Read(path)
	if err != nil || len(l.Intervals) != 4 {
		t.Fatalf("whole log: %v, %v; want 4 intervals", l, err)
	}
	cuts := 0
	for i, ch := range whole[:len(whole)-1] {
		if ch != '\n' {
			continue
		}
		cuts++
		if err := os.WriteFile(path, whole[:i+1], 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := Read(path)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
			t.Errorf("cut after line %d (%d bytes): %v, err %v; want ErrCorrupt naming %s", cuts, i+1, l, err, path)
		}
	}
	if cuts < 8 { // mark, version, comment, start, base, legend, 4 intervals
		t.Fatalf("only %d line ends to cut at in\n%s", cuts, whole)
	}
}

// TestReadHlogReadsAnUnmarkedLog reads a log as written before the end
// record existed (no mark, no end): results directories of earlier runs
// still render and compare.
func TestReadHlogReadsAnUnmarkedLog(t *testing.T) {
	dir := t.TempDir()
	c := result.Cell{Impl: "x", Scenario: "hot", Clients: 1}
	writeOldLog(t, dir, c, []int64{10, 20, 30})
	path := result.CellPath(dir, c, result.HlogExt)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.TrimPrefix(b, []byte(hlogMark+"\n"))
	b = b[:bytes.LastIndex(b, []byte("#[End:"))]
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Read(path)
	if err != nil || len(l.Intervals) != 3 {
		t.Fatalf("unmarked log: %v, %v; want its 3 intervals", l, err)
	}
}
