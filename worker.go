package lockbench

import (
	"context"
	"errors"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/scenarios"
)

// worker is one simulated client: its own Locker, its own histograms and
// random stream. Only its goroutine records; what it records is merged when
// the second is over (see intervals), because hdrhistogram-go is not safe
// for concurrent use.
type worker struct {
	id      int
	l       impl.Locker
	settler impl.Settler // nil when the implementation cannot say
	timer   *time.Timer
	rng     *rand.Rand
	picker  *scenarios.Picker // keys scenario

	acquires atomic.Int64
	errors   atomic.Int64
	errClass map[string]int64 // written by the worker only, read after it ends
	done     atomic.Bool      // burst: granted, or gave up
	queued   atomic.Bool      // burst, polling: seen waiting at least once
	streak   int              // consecutive acquire errors, for back-off
	live     liveHist

	iv    *intervals
	ivH   [nTags]*hdrhistogram.Histogram // this second's, see intervals
	ivIdx int
	ivEnd time.Time
}

func newWorker(id int, l impl.Locker, seed uint64) *worker {
	w := &worker{id: id, l: l, timer: time.NewTimer(time.Hour),
		rng: rand.New(rand.NewPCG(seed, uint64(id)^0x9e3779b97f4a7c15))}
	w.timer.Stop()
	w.settler, _ = l.(impl.Settler)
	return w
}

// record adds one latency to h, allocation-free (see impl.RecordMicros).
func record(h *hdrhistogram.Histogram, d time.Duration) { impl.RecordMicros(h, d) }

func (w *worker) recordAcquire(now time.Time, d time.Duration) {
	w.rec(tagAcquire, now, d)
	w.acquires.Add(1)
	w.live.add(d.Microseconds())
}

// maxBackoff caps the pause after consecutive acquire errors.
const maxBackoff = time.Second

// backoff pauses after an acquire error: the retry interval, doubled with
// each further error in a row up to maxBackoff, jittered. A client that
// hammered a failing or overloaded server at the retry interval would keep
// it overloaded (a thousand Redlock clients did, for ten minutes, with one
// acquisition); real clients back off, and so do these.
func (w *worker) backoff(ctx context.Context, retry time.Duration) {
	d := retry << min(w.streak, 20)
	if d <= 0 || d > maxBackoff {
		d = maxBackoff
	}
	w.streak++
	w.pause(ctx, d/2+time.Duration(w.rng.Int64N(int64(d/2)+1)))
}

func (w *worker) fail(err error) {
	w.errors.Add(1)
	if w.errClass == nil {
		w.errClass = map[string]int64{}
	}
	w.errClass[impl.Class(err)]++
}

// pause sleeps d on the worker's timer or until ctx is done.
func (w *worker) pause(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	w.timer.Reset(d)
	select {
	case <-w.timer.C:
	case <-ctx.Done():
		w.timer.Stop()
	}
}

// over reports whether the cell has ended. A client library may time out
// on the cell's deadline a moment before the context says so; an error then
// is the end of the cell, not a failure of the lock.
func (r *cellRun) over(ctx context.Context, now time.Time) bool {
	return ctx.Err() != nil || (!r.deadline.IsZero() && !now.Before(r.deadline))
}

// holdAndRelease keeps the lock for a hold time, under the checker's eye,
// then releases it. A lost lease is counted by the implementation
// (Counters.Lost), not as an error.
func (r *cellRun) holdAndRelease(ctx context.Context, w *worker, lock int, lease impl.Lease, got time.Time, measured bool) {
	tok, fenced := lease.Fence()
	v := r.check.enter(lock, w.id, tok, fenced, got)
	w.pause(ctx, r.spec.HoldDist.Sample(w.rng))
	if r.spec.Scenario.Kind == scenarios.Burst && r.driver.Herd != impl.Polling {
		r.settle(ctx)
	}
	t := time.Now()
	r.check.exit(v, w.id, t)
	r.check.released(lock, t)
	err := lease.Release(context.Background())
	now := time.Now()
	if measured {
		w.rec(tagRelease, now, now.Sub(t))
	}
	if err != nil && !errors.Is(err, impl.ErrLockLost) {
		w.fail(err)
	}
}

// granted records an acquisition: its latency, and the hand-off gap when
// this client was waiting as the previous holder released.
func (r *cellRun) granted(w *worker, lock int, start, got time.Time, latency time.Duration) {
	w.recordAcquire(got, latency)
	if gap, ok := r.check.handoff(lock, start, got); ok {
		w.rec(tagHandoff, got, gap)
	}
}

// closedLoop is acquire → hold → release → think until the cell ends.
func (r *cellRun) closedLoop(ctx context.Context, w *worker) {
	defer w.flush()
	lock := w.id % len(r.names)
	warm := impl.WarmingUp(ctx)
	for ctx.Err() == nil {
		if w.picker != nil {
			lock = w.picker.Pick()
		}
		start := time.Now()
		measured := !start.Before(r.measureFrom)
		if !r.deadline.IsZero() && !start.Before(r.deadline) {
			return
		}
		if measured && r.limited && r.remaining.Add(-1) < 0 {
			return
		}
		actx := ctx
		if !measured {
			actx = warm
		}
		lease, err := w.l.Acquire(actx, r.names[lock])
		got := time.Now()
		if err != nil {
			if r.over(ctx, got) {
				return
			}
			if measured {
				w.fail(err)
			}
			w.backoff(ctx, r.spec.Config.Retry)
			continue
		}
		w.streak = 0
		if measured {
			r.granted(w, lock, start, got, got.Sub(start))
		}
		r.holdAndRelease(ctx, w, lock, lease, got, measured)
		w.pause(ctx, r.spec.ThinkDist.Sample(w.rng))
	}
}

// openLoop serves arrivals the generator dispatches. Latency counts from
// the arrival's intended time, so a stalled lock shows in the tail instead
// of slowing the arrivals down (no coordinated omission); the service time
// from the actual start is recorded beside it.
func (r *cellRun) openLoop(ctx context.Context, w *worker) {
	defer w.flush()
	lock := w.id % len(r.names)
	warm := impl.WarmingUp(ctx)
	for {
		var due time.Time
		select {
		case <-ctx.Done():
			return
		case ns := <-r.arrivals:
			due = r.start.Add(time.Duration(ns))
		}
		if w.picker != nil {
			lock = w.picker.Pick()
		}
		start := time.Now()
		measured := !due.Before(r.measureFrom)
		actx := ctx
		if !measured {
			actx = warm
		}
		lease, err := w.l.Acquire(actx, r.names[lock])
		got := time.Now()
		if err != nil {
			r.inflight.Add(-1)
			if ctx.Err() != nil {
				return
			}
			if measured {
				w.fail(err)
			}
			continue
		}
		if measured {
			r.granted(w, lock, start, got, got.Sub(due))
			w.rec(tagService, got, got.Sub(start))
		}
		r.holdAndRelease(ctx, w, lock, lease, got, measured)
		r.inflight.Add(-1)
	}
}

// generate fires arrivals at --rate, evenly spaced or as a Poisson process,
// until the cell ends. An arrival that finds --max-inflight acquisitions
// already in flight is dropped and counted, never re-timed. When the
// generator itself is late it fires what is due at once and records how
// late it was (schedule lag).
func (r *cellRun) generate(ctx context.Context) {
	rng := rand.New(rand.NewPCG(r.spec.Config.Seed, 0xa11ce))
	mean := time.Duration(float64(time.Second) / r.spec.Rate)
	poisson := r.spec.Arrival == ArrivalPoisson
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	next := r.start
	for n := int64(0); ; n++ {
		if !r.deadline.IsZero() && !next.Before(r.deadline) {
			return
		}
		measured := !next.Before(r.measureFrom)
		if measured && r.limited && r.remaining.Add(-1) < 0 {
			return
		}
		if d := time.Until(next); d > 0 {
			t.Reset(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		} else if ctx.Err() != nil {
			return
		}
		if measured {
			record(r.lag, time.Since(next))
			r.offered.Add(1)
		}
		if r.inflight.Load() >= int64(r.spec.MaxInflight) {
			if measured {
				r.dropped.Add(1)
			}
		} else {
			r.inflight.Add(1)
			r.arrivals <- int64(next.Sub(r.start))
		}
		if poisson {
			next = next.Add(time.Duration(rng.ExpFloat64() * float64(mean)))
		} else {
			next = r.start.Add(time.Duration(float64(n+1) * float64(mean)))
		}
	}
}

// burst acquires once. The first holder keeps the lock until every other
// client is queued and settled; each holder hands on only when all
// remaining waiters have settled again, so every release meets a full,
// armed queue — the herd in its exact form.
func (r *cellRun) burst(ctx context.Context, w *worker) {
	defer w.flush()
	lock := w.id % len(r.names)
	start := time.Now()
	var lease impl.Lease
	for {
		var err error
		lease, err = w.l.Acquire(ctx, r.names[lock])
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			w.done.Store(true)
			return
		}
		// Counted, then tried again: each client acquires once, and an
		// error (a Redlock attempt without quorum under the storm) is part
		// of what it took. The latency runs from the first try.
		w.fail(err)
		w.queued.Store(true) // it has tried: it is in the queue's fray
		w.backoff(ctx, r.spec.Config.Retry)
	}
	got := time.Now()
	r.granted(w, lock, start, got, got.Sub(start))
	w.done.Store(true)
	if r.grants.Add(1) == 1 {
		r.settle(ctx)
	}
	r.holdAndRelease(ctx, w, lock, lease, got, true)
}

// settle waits until every client still waiting reports Settled, polling.
// For implementations that watch, that is the exact form of the herd: no
// notification in flight. Pollers have no notifications to lose and are
// never all asleep at once for long; for them a client counts once it has
// been seen waiting, and only the first holder waits for that.
func (r *cellRun) settle(ctx context.Context) {
	polling := r.driver.Herd == impl.Polling
	for _, w := range r.workers {
		if w.settler == nil {
			r.settleState.Store(2)
			return
		}
	}
	deadline := time.Now().Add(DefaultSettleTimeout)
	for {
		all := true
		for _, w := range r.workers {
			if w.done.Load() || (polling && w.queued.Load()) {
				continue
			}
			if !w.settler.Settled() {
				all = false
				break
			}
			if polling {
				w.queued.Store(true)
			}
		}
		if all || ctx.Err() != nil {
			return
		}
		if time.Now().After(deadline) {
			r.settleState.CompareAndSwap(0, 1)
			return
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// liveHist is a coarse latency histogram of atomics — four buckets per
// power of two — that the progress line may read while workers write. The
// exact figures come from the HdrHistograms at the end of the cell.
type liveHist struct{ b [4 * 64]atomic.Int64 }

func liveBucket(us int64) int {
	if us < 4 {
		return int(max(us, 0))
	}
	n := bits.Len64(uint64(us)) // us in [2^(n-1), 2^n)
	sub := (us >> (n - 3)) & 3  // next two bits
	return 4*(n-2) + int(sub)
}

func liveValue(i int) int64 {
	if i < 4 {
		return int64(i)
	}
	n := i/4 + 2
	sub := int64(i % 4)
	return (4 + sub + 1) << (n - 3) // upper edge of the bucket
}

func (h *liveHist) add(us int64) { h.b[liveBucket(us)].Add(1) }
