package result

import (
	"math"
	"testing"
	"time"
)

// writeOldLog writes a cell's .hlog as lockbench did before it cut the
// last interval at the cell's end: every interval a whole second long,
// the last holding only the acquisitions of its first part.
func writeOldLog(t *testing.T, dir string, c Cell, perSecond []int64) {
	t.Helper()
	start := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	l, err := CreateCellLog(dir, c, "test")
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range perSecond {
		h := NewHistogram()
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
	c := Cell{Impl: "x", Scenario: "hot", Clients: 1, DurationS: 3.6}
	writeOldLog(t, dir, c, []int64{1000, 1000, 1000, 600})
	l, err := ReadCellLog(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	got := l.IntervalSamples(TagAcquire)
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
	l, err = ReadCellLog(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range l.IntervalStats(TagAcquire) {
		if s.PerS != 1000 {
			t.Errorf("interval at %.1fs: %.0f/s, want every interval at 1000/s", s.MidS, s.PerS)
		}
	}
}
