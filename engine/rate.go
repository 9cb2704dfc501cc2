package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

func init() {
	RegisterScenario(rateScenario{loadScenario{name: "rate", kind: result.KindOpen, newShape: func() shape { return new(openLoop) },
		description: "open loop: --rate arrivals/s (--arrival constant|poisson), latency from the intended time; beyond --max-inflight dropped"}})
}

// rateScenario is the open loop: it needs a rate, and bounds what is in
// flight by the clients unless told otherwise.
type rateScenario struct{ loadScenario }

func (s rateScenario) Check(spec *CellSpec) error {
	if spec.Rate <= 0 {
		return fmt.Errorf("%w: scenario %s needs a rate > 0 (--rate)", ErrUsage, s.name)
	}
	if spec.MaxInflight <= 0 {
		spec.MaxInflight = spec.Clients
	}
	return s.loadScenario.Check(spec)
}

// openLoop is the rate scenario's shape: arrivals come at the rate on a
// schedule the clients share; a free client takes the next arrival and
// sends it at its intended time itself, queued arrivals are served in
// turn, and every arrival let in before the end is served, however late.
// It holds the cell's schedule and its accounting of arrivals.
type openLoop struct {
	sched      *schedule
	inflight   atomic.Int64 // let in and not yet served, queued ones included
	waiting    atomic.Int64 // taken ahead by a client, not yet let in or dropped
	offered    atomic.Int64
	dropped    atomic.Int64
	unfinished atomic.Int64
}

func (o *openLoop) prepare(r *cellRun) {
	o.sched = newSchedule(r.spec)
	for _, w := range r.workers {
		w.picker = r.spec.Keys.NewPicker(r.spec.Locks, w.rng)
	}
}

func (o *openLoop) client(ctx context.Context, r *cellRun, w *worker) { o.serve(ctx, r, w) }

// MaxDrain bounds how long the open loop serves arrivals let in before its
// end; what is still unserved then is counted unfinished.
const MaxDrain = 10 * time.Second

// serveContext lets the clients outlive the arrivals: every arrival let in
// before the end is served, however late, or its tail would go missing
// exactly where a stalled lock shows (coordinated omission again) — within
// MaxDrain (or the cell time limit, if shorter) after the last arrival.
func (o *openLoop) serveContext(parent context.Context, r *cellRun) (context.Context, context.CancelFunc) {
	end := r.deadline
	if end.IsZero() {
		end = r.start.Add(r.spec.Warmup + r.spec.MaxTime)
	}
	return context.WithDeadline(parent, end.Add(min(MaxDrain, r.spec.MaxTime)))
}

// drive waits for the schedule to end — the clients run it themselves —
// settles what came due while every client was still busy, then waits for
// those in flight to be served; what the time limit leaves unserved is
// counted, and the cell truncated.
func (o *openLoop) drive(ctx context.Context, r *cellRun) {
	select {
	case <-o.sched.ended:
	case <-ctx.Done():
	}
	o.endSchedule(r, errors.Is(ctx.Err(), context.DeadlineExceeded))
	for o.inflight.Load()+o.waiting.Load() > 0 && r.wctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	o.unfinished.Store(o.inflight.Load())
	if r.wctx.Err() != nil && context.Cause(ctx) != context.Canceled && o.unfinished.Load() > 0 {
		r.truncated = fmt.Sprintf("%d arrivals were still unserved %v after the last one", o.unfinished.Load(), min(MaxDrain, r.spec.MaxTime))
	}
	r.wcancel()
}

func (o *openLoop) finish(r *cellRun, c *result.Cell, totals [nTags]*hdrhistogram.Histogram) {
	s := r.spec
	c.Open = &result.OpenLoop{
		Rate: s.Rate, Arrival: s.Arrival, MaxInflight: s.MaxInflight,
		Offered: o.offered.Load(), Dropped: o.dropped.Load(), Unfinished: o.unfinished.Load(),
		ServiceLatencyUs: result.LatencyOf(totals[tagService]), ScheduleLagUs: result.LatencyOf(totals[tagLag]),
	}
}

// serve serves arrivals from the shared schedule. Latency counts from
// the arrival's intended time, so a stalled lock shows in the tail instead
// of slowing the arrivals down (no coordinated omission); the service time
// from the actual start is recorded beside it, and the schedule lag —
// actual send minus intended send, for an arrival a client was free for —
// tells the generator's own lateness from the lock's.
func (o *openLoop) serve(ctx context.Context, r *cellRun, w *worker) {
	defer w.flush()
	if w.alarm = newAlarm(ctx, spinAllowance(r.spec.Rate)); w.alarm != nil {
		defer func() { w.alarm.close(); w.alarm = nil }()
	}
	lock := w.id % r.names.len()
	warm := impl.WarmingUp(ctx)
	serving := false // counted in flight for the arrival just served
	for {
		taken := w.now()
		due, admitted, ok := o.take(r, taken) // still in flight, if serving
		if serving {
			o.inflight.Add(-1)
			serving = false
		}
		if !ok || ctx.Err() != nil {
			return
		}
		if !admitted {
			w.flushBefore(due) // an idle client holds no interval open
			if !w.waitUntil(ctx, due) {
				o.waiting.Add(-1)
				return
			}
			if !o.admit(r, due) {
				continue
			}
		}
		serving = true
		if w.picker != nil {
			lock = w.picker.Pick()
		}
		w.readyToWait()
		start := w.now()
		measured := !due.Before(r.measureFrom)
		actx := ctx
		if !measured {
			actx = warm
		}
		if measured {
			w.rec(tagLag, start, start.Sub(later(due, taken)))
		}
		lease, got, err := w.acquire(actx, r.names.at(lock), start)
		if err != nil {
			if ctx.Err() != nil {
				o.inflight.Add(-1)
				return
			}
			if measured && !errors.Is(err, errAbandoned) {
				w.fail(err)
			}
			continue
		}
		if measured {
			r.granted(w, lock, start, got, got.Sub(due))
			w.rec(tagService, got, got.Sub(start))
		}
		r.holdAndRelease(ctx, w, lock, lease, got, measured)
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
