package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/inproc"
	"github.com/lockbench/lockbench/result"
)

// The cell time limit bounds a timed cell too: a duration beyond it is
// cut there, and the cell says so.
func TestMaxTimeBoundsATimedCell(t *testing.T) {
	t.Parallel()
	cell, err := RunCell(context.Background(), CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 2, Duration: time.Hour, Hold: time.Millisecond,
		MaxTime: 300 * time.Millisecond, Config: impl.Config{Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cell.Truncated == "" || cell.DurationS > 0.301 || cell.Acquires == 0 {
		t.Errorf("an hour's cell under a 300ms limit measured %.3fs, %d acquisitions, truncated %q",
			cell.DurationS, cell.Acquires, cell.Truncated)
	}
}

// A timed open loop that ran its whole duration and served every arrival
// is not truncated (it used to be flagged, always).
func TestATimedOpenLoopIsNotTruncated(t *testing.T) {
	t.Parallel()
	cell, err := RunCell(context.Background(), CellSpec{
		Impl: "inproc", Scenario: scenario(t, "rate"), Clients: 2, Rate: 200, Duration: 500 * time.Millisecond,
		Config: impl.Config{Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cell.Truncated != "" || cell.Open.Unfinished != 0 || cell.Open.Offered == 0 {
		t.Errorf("truncated %q, %d of %d arrivals unfinished", cell.Truncated, cell.Open.Unfinished, cell.Open.Offered)
	}
}

// With a sink, intervals leave the cell as they close: the result keeps
// none, and what the sink received adds up to the cell's totals exactly.
func TestIntervalsStreamToTheSinkLosingNothing(t *testing.T) {
	t.Parallel()
	var got []result.Interval
	var calls atomic.Int64
	res, err := RunCellDetail(context.Background(), CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 4, Duration: 2500 * time.Millisecond,
		Hold: 200 * time.Microsecond, Config: impl.Config{Namespace: t.Name()},
		OnInterval: func(c result.Cell, start time.Time, iv result.Interval) {
			calls.Add(1)
			if c.Impl != "inproc" || c.Clients != 4 {
				t.Errorf("interval for cell %+v", c)
			}
			got = append(got, result.Interval{Start: iv.Start, End: iv.End,
				Acquire: iv.Acquire.Clone(), Release: iv.Release.Clone()})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Intervals) != 0 {
		t.Errorf("the result kept %d intervals though a sink took them", len(res.Intervals))
	}
	if len(got) < 3 {
		t.Fatalf("%d intervals streamed for 2.5 s", len(got))
	}
	var acq int64
	for i, iv := range got {
		acq += iv.Acquire.TotalCount()
		if i > 0 && !iv.Start.After(got[i-1].Start) {
			t.Errorf("interval %d starts at %v, not after %v", i, iv.Start, got[i-1].Start)
		}
	}
	if acq != res.Acquires {
		t.Errorf("streamed intervals hold %d acquisitions, the cell %d", acq, res.Acquires)
	}
	if last := got[len(got)-1]; !last.End.Before(last.Start.Add(result.IntervalLength)) {
		t.Errorf("the last interval is not cut at the cell's end: %v–%v", last.Start, last.End)
	}
}

// panicky is a lock whose client panics on its tenth acquisition.
type panicky struct {
	impl.Locker
	n int
}

func (p *panicky) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	if p.n++; p.n == 10 {
		panic("boom")
	}
	return p.Locker.Acquire(ctx, name)
}

func init() {
	impl.Register(impl.Driver{Name: "test-panic", Description: "inproc whose clients panic",
		New: func(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
			l, err := inproc.New(ctx, cfg)
			return &panicky{Locker: l}, err
		}})
}

// A panic in a client ends its cell with an error naming the cell and the
// panic, and with what was measured before it.
func TestAPanicInACellIsRecovered(t *testing.T) {
	t.Parallel()
	res, err := RunCellDetail(context.Background(), CellSpec{
		Impl: "test-panic", Scenario: scenario(t, "hot"), Clients: 1, Duration: 10 * time.Second,
		Config: impl.Config{Namespace: t.Name()},
	})
	if !errors.Is(err, ErrPanic) || res.Impl != "test-panic" || res.Acquires != 9 || res.Truncated == "" {
		t.Errorf("err %v, %d acquisitions kept, truncated %q; want ErrPanic after 9", err, res.Acquires, res.Truncated)
	}
}
