package lockbench

import (
	"slices"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// IntervalLength is the length of the intervals of a cell's timeline.
const IntervalLength = time.Second

// What a worker records, one histogram each per interval.
const (
	tagAcquire = iota // acquire latency (open loop: from the intended arrival)
	tagRelease        // release latency
	tagHandoff        // release completed → next holder's acquire returned
	tagService        // open loop: acquire latency from the actual start
	nTags
)

// Interval is one second of a cell: the latencies recorded by every client
// in it, merged. A histogram with nothing recorded is empty, never nil.
type Interval struct {
	Start                              time.Time
	Acquire, Release, Handoff, Service *hdrhistogram.Histogram
}

func (iv Interval) byTag() [nTags]*hdrhistogram.Histogram {
	return [nTags]*hdrhistogram.Histogram{iv.Acquire, iv.Release, iv.Handoff, iv.Service}
}

// intervals gathers per-second histograms from workers. Each worker records
// into its own histograms for the current second and, when the second is
// over (or it stops), hands them over a channel to one collector goroutine
// that merges them and recycles them through a pool. Recording itself stays
// lock-free and allocation-free (but for the pool's refills after a GC);
// the hand-over happens once per worker per second. Memory: a histogram is
// about 188 KB, and a client that records every second holds one per tag it
// uses (two or three), so ~0.5 MB a busy client; a burst client hands its
// histograms back when it is done, so a 1000-client burst holds few.
type intervals struct {
	start time.Time
	ch    chan ivPart
	pool  sync.Pool
	done  chan struct{}
	by    map[int]*[nTags]*hdrhistogram.Histogram
}

type ivPart struct {
	idx int
	h   [nTags]*hdrhistogram.Histogram
}

func newIntervals(start time.Time, workers int) *intervals {
	iv := &intervals{
		start: start,
		ch:    make(chan ivPart, 4*workers),
		done:  make(chan struct{}),
		by:    map[int]*[nTags]*hdrhistogram.Histogram{},
	}
	iv.pool.New = func() any { return newHist() }
	go iv.collect()
	return iv
}

func (iv *intervals) collect() {
	defer close(iv.done)
	for p := range iv.ch {
		iv.merge(p)
		for _, h := range p.h {
			if h != nil {
				h.Reset()
				iv.pool.Put(h)
			}
		}
	}
}

func (iv *intervals) merge(p ivPart) {
	into := iv.by[p.idx]
	if into == nil {
		into = new([nTags]*hdrhistogram.Histogram)
		iv.by[p.idx] = into
	}
	for t, h := range p.h {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		if into[t] == nil {
			into[t] = newHist()
		}
		into[t].Merge(h)
	}
}

// finish stops the collector and returns the intervals in time order and
// the cell's totals per tag. Every worker must have flushed.
func (iv *intervals) finish() ([]Interval, [nTags]*hdrhistogram.Histogram) {
	close(iv.ch)
	<-iv.done
	keys := make([]int, 0, len(iv.by))
	for i := range iv.by {
		keys = append(keys, i)
	}
	slices.Sort(keys)
	var total [nTags]*hdrhistogram.Histogram
	for t := range total {
		total[t] = newHist()
	}
	out := make([]Interval, 0, len(keys))
	for _, i := range keys {
		hs := iv.by[i]
		for t := range hs {
			if hs[t] == nil {
				hs[t] = newHist()
			}
			total[t].Merge(hs[t])
		}
		out = append(out, Interval{Start: iv.start.Add(time.Duration(i) * IntervalLength),
			Acquire: hs[tagAcquire], Release: hs[tagRelease], Handoff: hs[tagHandoff], Service: hs[tagService]})
	}
	return out, total
}

// rec records d under tag in the interval holding now.
func (w *worker) rec(tag int, now time.Time, d time.Duration) {
	if !now.Before(w.ivEnd) {
		w.flush()
		w.ivIdx = int(now.Sub(w.iv.start) / IntervalLength)
		w.ivEnd = w.iv.start.Add(time.Duration(w.ivIdx+1) * IntervalLength)
	}
	h := w.ivH[tag]
	if h == nil {
		h = w.iv.pool.Get().(*hdrhistogram.Histogram)
		w.ivH[tag] = h
	}
	record(h, d)
}

// flush hands the worker's current interval to the collector.
func (w *worker) flush() {
	p := ivPart{idx: w.ivIdx}
	any := false
	for t, h := range w.ivH {
		if h != nil {
			p.h[t], any = h, true
			w.ivH[t] = nil
		}
	}
	if any {
		w.iv.ch <- p
	}
}
