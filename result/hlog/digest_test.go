package hlog

import (
	"reflect"
	"testing"
	"time"

	"github.com/lockbench/lockbench/result"
)

// A digest read as a stream says what the whole log says of its tag:
// the same interval samples (the last interval cut at the cell's end,
// gaps filled) and the same merged histogram, with the other tags' and a
// missing log's answers nil.
func TestCellDigestAgreesWithTheLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := result.Cell{Impl: "x", Scenario: "hot", Clients: 4, DurationS: 5.5}
	start := time.UnixMilli(1_700_000_000_000)
	var ivs []Interval
	for i := range 7 {
		if i == 2 || i == 3 {
			continue // a stall: no interval written
		}
		acq, rel := result.NewHistogram(), result.NewHistogram()
		for v := range int64(100 + 10*i) {
			acq.RecordValue(100 + v*int64(i+1))
			rel.RecordValue(50 + v)
		}
		from := start.Add(time.Duration(i) * time.Second)
		ivs = append(ivs, Interval{Start: from, End: from.Add(time.Second), Acquire: acq, Release: rel})
	}
	if err := WriteCell(dir, c, start, ivs, "test"); err != nil {
		t.Fatal(err)
	}
	l, err := ReadCell(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ReadDigest(dir, c, result.TagAcquire)
	if err != nil {
		t.Fatal(err)
	}
	want, got := l.IntervalSamples(result.TagAcquire), d.IntervalSamples(result.TagAcquire)
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("digest samples\n%+v\nlog samples\n%+v", got, want)
	}
	if m, w := d.Merged(result.TagAcquire), l.Merged(result.TagAcquire); m.TotalCount() != w.TotalCount() || m.ValueAtQuantile(99) != w.ValueAtQuantile(99) || m.Max() != w.Max() {
		t.Errorf("merged: %d values, p99 %d; the log's %d, %d", m.TotalCount(), m.ValueAtQuantile(99), w.TotalCount(), w.ValueAtQuantile(99))
	}
	if !reflect.DeepEqual(d.IntervalStats(result.TagAcquire), l.IntervalStats(result.TagAcquire)) {
		t.Error("interval stats differ")
	}
	if d.Merged(result.TagRelease) != nil || d.IntervalSamples(result.TagRelease) != nil {
		t.Error("a digest of acquire answers for release")
	}
	if m, err := ReadDigest(dir, result.Cell{Impl: "y", Scenario: "hot", Clients: 1}, result.TagAcquire); m != nil || err != nil || m.Merged(result.TagAcquire) != nil {
		t.Errorf("no log: %v, %v", m, err)
	}
}
