package result

import (
	"reflect"
	"testing"
	"time"
)

// A digest read as a stream says what the whole log says of its tag:
// the same interval samples (the last interval cut at the cell's end,
// gaps filled) and the same merged histogram, with the other tags' and a
// missing log's answers nil.
func TestCellDigestAgreesWithTheLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := Cell{Impl: "x", Scenario: "hot", Clients: 4, DurationS: 5.5}
	start := time.UnixMilli(1_700_000_000_000)
	var ivs []Interval
	for i := range 7 {
		if i == 2 || i == 3 {
			continue // a stall: no interval written
		}
		acq, rel := NewHistogram(), NewHistogram()
		for v := range int64(100 + 10*i) {
			acq.RecordValue(100 + v*int64(i+1))
			rel.RecordValue(50 + v)
		}
		from := start.Add(time.Duration(i) * time.Second)
		ivs = append(ivs, Interval{Start: from, End: from.Add(time.Second), Acquire: acq, Release: rel})
	}
	if err := WriteCellLog(dir, c, start, ivs, "test"); err != nil {
		t.Fatal(err)
	}
	l, err := ReadCellLog(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ReadCellDigest(dir, c, TagAcquire)
	if err != nil {
		t.Fatal(err)
	}
	want, got := l.IntervalSamples(TagAcquire), d.IntervalSamples(TagAcquire)
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("digest samples\n%+v\nlog samples\n%+v", got, want)
	}
	if m, w := d.Merged(TagAcquire), l.Merged(TagAcquire); m.TotalCount() != w.TotalCount() || m.ValueAtQuantile(99) != w.ValueAtQuantile(99) || m.Max() != w.Max() {
		t.Errorf("merged: %d values, p99 %d; the log's %d, %d", m.TotalCount(), m.ValueAtQuantile(99), w.TotalCount(), w.ValueAtQuantile(99))
	}
	if !reflect.DeepEqual(d.IntervalStats(TagAcquire), l.IntervalStats(TagAcquire)) {
		t.Error("interval stats differ")
	}
	if d.Merged(TagRelease) != nil || d.IntervalSamples(TagRelease) != nil {
		t.Error("a digest of acquire answers for release")
	}
	if m, err := ReadCellDigest(dir, Cell{Impl: "y", Scenario: "hot", Clients: 1}, TagAcquire); m != nil || err != nil || m.Merged(TagAcquire) != nil {
		t.Errorf("no log: %v, %v", m, err)
	}
}
