package lockbench

import (
	"slices"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// IntervalLength is the length of the intervals of a cell's timeline.
const IntervalLength = time.Second

// Interval is one second of a cell: the latencies recorded by every client
// in it, merged.
type Interval struct {
	Start            time.Time
	Acquire, Release *hdrhistogram.Histogram
}

// intervals gathers per-second histograms from workers. Each worker records
// into its own interval histograms and, once a second, hands the filled pair
// over a channel to one collector goroutine that merges it and recycles the
// histograms through a pool. Recording itself stays lock-free and
// allocation-free; the hand-over happens once per worker per second.
type intervals struct {
	start time.Time
	ch    chan ivPart
	pool  sync.Pool
	done  chan struct{}
	acq   map[int]*hdrhistogram.Histogram
	rel   map[int]*hdrhistogram.Histogram
}

type ivPart struct {
	idx      int
	acq, rel *hdrhistogram.Histogram
}

func newIntervals(start time.Time, workers int) *intervals {
	iv := &intervals{
		start: start,
		ch:    make(chan ivPart, 4*workers),
		done:  make(chan struct{}),
		acq:   map[int]*hdrhistogram.Histogram{},
		rel:   map[int]*hdrhistogram.Histogram{},
	}
	iv.pool.New = func() any { return newHist() }
	go iv.collect()
	return iv
}

func (iv *intervals) collect() {
	defer close(iv.done)
	for p := range iv.ch {
		iv.merge(p)
		p.acq.Reset()
		p.rel.Reset()
		iv.pool.Put(p.acq)
		iv.pool.Put(p.rel)
	}
}

func (iv *intervals) merge(p ivPart) {
	for _, m := range []struct {
		into map[int]*hdrhistogram.Histogram
		h    *hdrhistogram.Histogram
	}{{iv.acq, p.acq}, {iv.rel, p.rel}} {
		if m.h.TotalCount() == 0 {
			continue
		}
		if m.into[p.idx] == nil {
			m.into[p.idx] = newHist()
		}
		m.into[p.idx].Merge(m.h)
	}
}

func (iv *intervals) get() *hdrhistogram.Histogram { return iv.pool.Get().(*hdrhistogram.Histogram) }

// finish stops the collector, merges what workers still hold, and returns
// the intervals in time order. Workers must have stopped.
func (iv *intervals) finish(ws []*worker) []Interval {
	close(iv.ch)
	<-iv.done
	for _, w := range ws {
		if w.ivAcq != nil {
			iv.merge(ivPart{idx: w.ivIdx, acq: w.ivAcq, rel: w.ivRel})
		}
	}
	idx := map[int]bool{}
	for i := range iv.acq {
		idx[i] = true
	}
	for i := range iv.rel {
		idx[i] = true
	}
	keys := make([]int, 0, len(idx))
	for i := range idx {
		keys = append(keys, i)
	}
	slices.Sort(keys)
	out := make([]Interval, 0, len(keys))
	for _, i := range keys {
		a, r := iv.acq[i], iv.rel[i]
		if a == nil {
			a = newHist()
		}
		if r == nil {
			r = newHist()
		}
		out = append(out, Interval{Start: iv.start.Add(time.Duration(i) * IntervalLength), Acquire: a, Release: r})
	}
	return out
}

// tick moves the worker to the interval holding now, handing the previous
// one to the collector if anything was recorded in it.
func (w *worker) tick(iv *intervals, now time.Time) {
	if w.ivAcq != nil && now.Before(w.ivEnd) {
		return
	}
	if w.ivAcq == nil {
		w.ivAcq, w.ivRel = iv.get(), iv.get()
	} else if w.ivAcq.TotalCount() > 0 || w.ivRel.TotalCount() > 0 {
		iv.ch <- ivPart{idx: w.ivIdx, acq: w.ivAcq, rel: w.ivRel}
		w.ivAcq, w.ivRel = iv.get(), iv.get()
	}
	w.ivIdx = int(now.Sub(iv.start) / IntervalLength)
	w.ivEnd = iv.start.Add(time.Duration(w.ivIdx+1) * IntervalLength)
}
