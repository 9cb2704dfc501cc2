package lockbench

import (
	"context"
	"errors"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/impl"
)

// worker is one simulated client: its own Locker, its own histograms. Only
// its goroutine records into the histograms; they are merged when the cell
// ends, because hdrhistogram-go is not safe for concurrent use.
type worker struct {
	id      int
	l       impl.Locker
	settler impl.Settler // nil when the implementation cannot say
	acq     *hdrhistogram.Histogram
	rel     *hdrhistogram.Histogram
	timer   *time.Timer

	acquires atomic.Int64
	errors   atomic.Int64
	errClass map[string]int64 // written by the worker only, read after it ends
	done     atomic.Bool      // burst: granted, or gave up
	live     liveHist

	iv           *intervals
	ivAcq, ivRel *hdrhistogram.Histogram // this second's, see intervals
	ivIdx        int
	ivEnd        time.Time
}

func newWorker(id int, l impl.Locker) *worker {
	w := &worker{id: id, l: l, acq: newHist(), rel: newHist(), timer: time.NewTimer(time.Hour)}
	w.timer.Stop()
	w.settler, _ = l.(impl.Settler)
	return w
}

// record adds one latency to h. It allocates nothing: values beyond the
// histogram's range are clamped rather than rejected with an error.
func record(h *hdrhistogram.Histogram, d time.Duration) {
	us := d.Microseconds()
	if us < histMin {
		us = histMin
	} else if us > histMax {
		us = histMax
	}
	h.RecordValue(us)
}

func (w *worker) recordAcquire(now time.Time, d time.Duration) {
	w.tick(w.iv, now)
	record(w.ivAcq, d)
	record(w.acq, d)
	w.acquires.Add(1)
	w.live.add(d.Microseconds())
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

// release gives the lease back. A lost lease is counted by the
// implementation (Counters.Lost), not as an error.
func (w *worker) release(lease impl.Lease, measured bool) {
	t := time.Now()
	err := lease.Release(context.Background())
	if measured {
		now := time.Now()
		w.tick(w.iv, now)
		record(w.ivRel, now.Sub(t))
		record(w.rel, now.Sub(t))
	}
	if err != nil && !errors.Is(err, impl.ErrLockLost) {
		w.fail(err)
	}
}

// closedLoop is acquire → hold → release → think until the cell ends.
func (r *cellRun) closedLoop(ctx context.Context, w *worker) {
	lock := w.id % len(r.names)
	name := r.names[lock]
	for ctx.Err() == nil {
		start := time.Now()
		measured := !start.Before(r.measureFrom)
		if !r.deadline.IsZero() && !start.Before(r.deadline) {
			return
		}
		if measured && r.limited && r.remaining.Add(-1) < 0 {
			return
		}
		lease, err := w.l.Acquire(ctx, name)
		got := time.Now()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if measured {
				w.fail(err)
			}
			w.pause(ctx, r.spec.Config.Retry) // no hot loop against a failing server
			continue
		}
		if measured {
			w.recordAcquire(got, got.Sub(start))
		}
		tok, fenced := lease.Fence()
		v := r.check.enter(lock, w.id, tok, fenced, got)
		w.pause(ctx, r.spec.Hold)
		r.check.exit(v, w.id, time.Now())
		w.release(lease, measured)
		w.pause(ctx, r.spec.Think)
	}
}

// burst acquires once. The first holder keeps the lock until every other
// client is queued and settled; each holder hands on only when all
// remaining waiters have settled again, so every release meets a full,
// armed queue — the herd in its exact form.
func (r *cellRun) burst(ctx context.Context, w *worker) {
	lock := w.id % len(r.names)
	start := time.Now()
	lease, err := w.l.Acquire(ctx, r.names[lock])
	got := time.Now()
	if err != nil {
		w.done.Store(true)
		if ctx.Err() == nil {
			w.fail(err)
		}
		return
	}
	w.recordAcquire(got, got.Sub(start))
	w.done.Store(true)
	if r.grants.Add(1) == 1 {
		r.settle(ctx)
	}
	tok, fenced := lease.Fence()
	v := r.check.enter(lock, w.id, tok, fenced, got)
	w.pause(ctx, r.spec.Hold)
	r.settle(ctx)
	r.check.exit(v, w.id, time.Now())
	w.release(lease, true)
}

// settle waits until every client still waiting reports Settled, polling.
func (r *cellRun) settle(ctx context.Context) {
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
			if !w.done.Load() && !w.settler.Settled() {
				all = false
				break
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
