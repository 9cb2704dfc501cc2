package engine

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// What a worker records, one histogram each per interval.
const (
	TagAcquire = iota // acquire latency (open loop: from the intended arrival)
	TagRelease        // release latency
	TagHandoff        // release completed → next holder's acquire returned
	TagService        // open loop: acquire latency from the actual start
	TagAbandon        // wait of an acquisition given up
	tagRenew          // lease renewal latency
	TagLag            // open loop: actual send minus intended send (schedule lag)
	nTags
	// tagBits holds a tag beside its value in a batch.
	tagBits = 3
)

// tagNames are the tags the cell's accumulator derives figures from, by
// their names in result; the open loop's own (service, lag) it reads
// itself.
var tagNames = [nTags]string{
	TagAcquire: result.TagAcquire, TagRelease: result.TagRelease, TagHandoff: result.TagHandoff,
	TagAbandon: result.TagAbandon, tagRenew: result.TagRenew,
}

// batchLen is how many latencies a worker gathers before it hands them on:
// 4 KiB a batch, so that an idle client costs kilobytes, not the 188 KB of
// an HdrHistogram per tag.
const batchLen = 512

// batch is latencies one worker recorded in one interval, each packed as
// microseconds << tagBits | tag.
type batch struct {
	idx int
	n   int
	v   [batchLen]int64
}

// intervals gathers a cell's latencies into per-interval HdrHistograms.
// Each worker appends what it records to a batch of its own — no lock, no
// allocation once the cell has made the batches its peak needs — and hands a batch
// to one collector goroutine when it is full, when its interval is over or
// when the worker stops. The collector does not wait on the batches'
// channel: it drains it every tick, or when a worker nudges it because the
// channel is half full, so that handing on a batch never wakes a sleeping
// goroutine (which cost a futex wake-up per batch, a fifth of the
// harness's CPU per cycle). The collector records them into the histograms of
// their interval and closes an interval once no worker can still add to
// it: then the interval is merged into the cell's totals and handed to the
// sink (a streaming .hlog), so a cell's memory does not grow with its
// duration, and a client's is one batch.
type intervals struct {
	start time.Time
	ch    chan *batch
	nudge chan struct{} // a full channel, or finish: drain now
	// free holds the batches the collector emptied. Unlike a sync.Pool,
	// a collection does not empty it: a pool's refills after each GC were
	// allocations on the recording path (about one per 300 cycles).
	free    chan *batch
	hists   sync.Pool
	done    chan struct{}
	workers []*Client
	sink    func(hlog.Interval)
	// out takes closed intervals to the goroutine that hands them to the
	// sink, so that a slow sink (a disk) never backs up the batches; wrote
	// closes when it is done.
	out   chan hlog.Interval
	wrote chan struct{}

	// The collector's alone.
	open        map[int]*Totals
	closedBelow int
	total       Totals
	kept        []hlog.Interval // without a sink
	late        int64           // values that came after their interval closed
	end         atomic.Int64    // ns after start; the last interval ends there
}

// noBatch is a worker's pending index while it holds no batch.
const noBatch = math.MaxInt64

// newIntervals starts the collector. sink, if set, receives each interval
// as it closes, in time order, on the collector's goroutine; without one
// the intervals are kept for finish to return.
func newIntervals(start time.Time, workers []*Client, sink func(hlog.Interval)) *intervals {
	iv := &intervals{
		start:   start,
		ch:      make(chan *batch, chanBatches+2*len(workers)),
		nudge:   make(chan struct{}, 1),
		done:    make(chan struct{}),
		workers: workers,
		sink:    sink,
		open:    map[int]*Totals{},
	}
	// Every batch that can exist at once: the channel's, one held and one
	// being handed on per worker, and the one the collector is adding.
	iv.free = make(chan *batch, cap(iv.ch)+2*len(workers)+1)
	iv.hists.New = func() any { return newHist() }
	for t := range iv.total {
		iv.total[t] = newHist()
	}
	for _, w := range workers {
		w.iv = iv
		w.pending.Store(noBatch)
	}
	if sink != nil {
		iv.out = make(chan hlog.Interval, 64)
		iv.wrote = make(chan struct{})
		go iv.write()
	}
	go iv.collect()
	return iv
}

// write hands closed intervals to the sink, then recycles their
// histograms.
func (iv *intervals) write() {
	defer close(iv.wrote)
	for out := range iv.out {
		iv.sink(out)
		for _, h := range []*hdrhistogram.Histogram{out.Acquire, out.Release, out.Handoff, out.Service, out.Abandon, out.Renew} {
			h.Reset()
			iv.hists.Put(h)
		}
	}
}

func (iv *intervals) collect() {
	defer close(iv.done)
	if iv.out != nil {
		defer func() { close(iv.out); <-iv.wrote }()
	}
	tick := time.NewTicker(drainEvery)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-iv.nudge:
		case <-tick.C:
		}
		if !iv.drain() {
			iv.closeBefore(math.MaxInt)
			return
		}
		if n%closeEvery == 0 {
			iv.closeDue()
		}
	}
}

const (
	// drainEvery is how often the collector drains the batches' channel
	// unasked. One client of the in-process lock fills about 16,000
	// batches a second; chanBatches holds 20 ms of that, and a worker that
	// finds the channel half full nudges the collector.
	drainEvery  = 10 * time.Millisecond
	chanBatches = 320
	// closeEvery is in drains: the collector looks for intervals to close
	// four times an interval.
	closeEvery = int(hlog.IntervalLength / 4 / drainEvery)
)

// drain records every batch in the channel, and reports whether it is
// still open.
func (iv *intervals) drain() bool {
	for {
		select {
		case b, ok := <-iv.ch:
			if !ok {
				return false
			}
			iv.add(b)
		default:
			return true
		}
	}
}

// hand gives b to the collector without waking it, unless the channel is
// half full; a full channel makes the worker wait for the collector.
func (iv *intervals) hand(b *batch) {
	select {
	case iv.ch <- b:
		if len(iv.ch) >= cap(iv.ch)/2 {
			iv.wake()
		}
	default:
		iv.wake()
		iv.ch <- b
	}
}

func (iv *intervals) wake() {
	select {
	case iv.nudge <- struct{}{}:
	default:
	}
}

// add records a batch into its interval's histograms. A batch whose
// interval already closed (its worker was held up for more than an
// interval between stamping and handing on) goes to the first interval
// still open, counted in late: a moment off in the timeline, but never
// missing from it, so the intervals always add up to the cell's totals.
func (iv *intervals) add(b *batch) {
	idx := b.idx
	if idx < iv.closedBelow {
		iv.late += int64(b.n)
		idx = iv.closedBelow
	}
	into := iv.open[idx]
	if into == nil {
		into = new(Totals)
		iv.open[idx] = into
	}
	for _, v := range b.v[:b.n] {
		t := v & (1<<tagBits - 1)
		if into[t] == nil {
			into[t] = iv.hists.Get().(*hdrhistogram.Histogram)
		}
		into[t].RecordValue(v >> tagBits)
	}
	b.n = 0
	select {
	case iv.free <- b:
	default: // cannot happen (free holds every batch), and a batch left to the GC is no harm
	}
}

// batch returns an emptied batch, or a new one while the cell has not yet
// made as many as its peak needed.
func (iv *intervals) batch() *batch {
	select {
	case b := <-iv.free:
		return b
	default:
		return new(batch)
	}
}

// closeDue closes every interval no worker can add to any more: those
// before every worker's pending batch and a whole interval in the past (a
// worker stamps its latencies a moment before it hands them on).
func (iv *intervals) closeDue() {
	limit := int(time.Since(iv.start)/hlog.IntervalLength) - 1
	for _, w := range iv.workers {
		limit = min(limit, int(min(w.pending.Load(), math.MaxInt32)))
	}
	// A worker hands its batch over before it says it holds a newer one,
	// so every batch behind the limit is in the channel by now.
	iv.drain()
	iv.closeBefore(limit)
}

// closeBefore closes the open intervals before limit, in time order.
func (iv *intervals) closeBefore(limit int) {
	var idx []int
	for i := range iv.open {
		if i < limit {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	for _, i := range idx {
		iv.emit(i, iv.open[i])
		delete(iv.open, i)
	}
	if limit > iv.closedBelow && limit != math.MaxInt {
		iv.closedBelow = limit
	}
}

func (iv *intervals) emit(i int, hs *Totals) {
	start := iv.start.Add(time.Duration(i) * hlog.IntervalLength)
	end := start.Add(hlog.IntervalLength)
	if e := iv.end.Load(); e > 0 && iv.start.Add(time.Duration(e)).Before(end) {
		end = iv.start.Add(time.Duration(e))
	}
	for t, h := range hs {
		if h == nil {
			hs[t] = newHist() // an interval's histograms are never nil
			continue
		}
		iv.total[t].Merge(h)
	}
	out := hlog.Interval{Start: start, End: end,
		Acquire: hs[TagAcquire], Release: hs[TagRelease], Handoff: hs[TagHandoff], Service: hs[TagService],
		Abandon: hs[TagAbandon], Renew: hs[tagRenew]}
	// The schedule lag is the generator's, not the lock's: it goes into
	// the cell's totals, not into the timeline.
	hs[TagLag].Reset()
	iv.hists.Put(hs[TagLag])
	if iv.out == nil {
		iv.kept = append(iv.kept, out)
		return
	}
	iv.out <- out
}

// finish stops the collector once every worker has stopped and flushed,
// closes the remaining intervals — the last ending at end — and returns
// the intervals kept (none with a sink) and the cell's totals per tag.
func (iv *intervals) finish(end time.Time) ([]hlog.Interval, Totals) {
	iv.end.Store(max(int64(end.Sub(iv.start)), 1))
	close(iv.ch)
	iv.wake()
	<-iv.done
	return iv.kept, iv.total
}

// rec records d under tag in the interval holding now.
func (w *Client) Record(tag int, now time.Time, d time.Duration) {
	if !now.Before(w.ivEnd) {
		w.Flush()
		w.ivIdx = int(now.Sub(w.iv.start) / hlog.IntervalLength)
		w.ivEnd = w.iv.start.Add(time.Duration(w.ivIdx+1) * hlog.IntervalLength)
	}
	b := w.batch
	if b == nil {
		b = w.iv.batch()
		b.idx = w.ivIdx
		w.batch = b
		w.pending.Store(int64(w.ivIdx))
	}
	b.v[b.n] = micros(d)<<tagBits | int64(tag)
	b.n++
	if b.n == batchLen {
		w.Flush()
	}
}

// micros is d in whole microseconds within the histograms' range; it
// allocates nothing (see result.RecordMicros).
func micros(d time.Duration) int64 {
	return min(max(d.Microseconds(), result.HistMinUs), result.HistMaxUs)
}

// FlushBefore hands on the worker's batch before a wait until t, if the
// batch's interval ends before then; a wait within the interval keeps it,
// since the interval cannot close before the next one is over anyway (see
// closeDue). An open-loop client waits between nearly all its arrivals: a
// hand-off before each wait cost a wake-up of the collector per lock
// cycle, and the clients' schedule lag. Like a closed-loop client's, a
// batch kept through a wait is still held when the next acquisition
// starts: if that one stalls, its interval closes when it returns (or
// gives up), and only after one has waited does the client hand on before
// each acquisition (readyToWait).
func (w *Client) FlushBefore(t time.Time) {
	if w.batch != nil && !t.Before(w.ivEnd) {
		w.Flush()
	}
}

// Flush hands the worker's batch to the collector.
func (w *Client) Flush() {
	if b := w.batch; b != nil {
		w.batch, w.fresh = nil, time.Time{}
		w.iv.hand(b)
		w.pending.Store(noBatch)
	}
}

// Totals are a cell's merged histograms, one per tag.
type Totals [nTags]*hdrhistogram.Histogram
