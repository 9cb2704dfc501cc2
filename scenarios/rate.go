package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

func init() {
	engine.RegisterScenario(engine.Load(engine.LoadSpec{Name: "rate", Kind: result.KindOpen, NewShape: func() engine.Shape { return new(openLoop) }, Check: checkRate,
		Description: "open loop: --rate arrivals/s (--arrival constant|poisson), latency from the intended time; beyond --max-inflight dropped"}))
}

// checkRate wants a rate, and bounds what is in flight by the clients
// unless told otherwise.
func checkRate(spec *engine.CellSpec) error {
	if spec.Rate <= 0 {
		return fmt.Errorf("%w: scenario rate needs a rate > 0 (--rate)", engine.ErrUsage)
	}
	if spec.MaxInflight <= 0 {
		spec.MaxInflight = spec.Clients
	}
	return nil
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

func (o *openLoop) Prepare(r *engine.Cell) {
	o.sched = newSchedule(r.Spec)
	for _, w := range r.Clients {
		w.Picker = r.Spec.Keys.NewPicker(r.Spec.Locks, w.Rand())
	}
}

func (o *openLoop) Client(ctx context.Context, r *engine.Cell, w *engine.Client) { o.serve(ctx, r, w) }

// MaxDrain bounds how long the open loop serves arrivals let in before its
// end; what is still unserved then is counted unfinished.
const MaxDrain = 10 * time.Second

// ServeContext lets the clients outlive the arrivals: every arrival let in
// before the end is served, however late, or its tail would go missing
// exactly where a stalled lock shows (coordinated omission again) — within
// MaxDrain (or the cell time limit, if shorter) after the last arrival.
func (o *openLoop) ServeContext(parent context.Context, r *engine.Cell) (context.Context, context.CancelFunc) {
	end := r.Deadline()
	if end.IsZero() {
		end = r.Start().Add(r.Spec.Warmup + r.Spec.MaxTime)
	}
	return context.WithDeadline(parent, end.Add(min(MaxDrain, r.Spec.MaxTime)))
}

// Drive waits for the schedule to end — the clients run it themselves —
// settles what came due while every client was still busy, then waits for
// those in flight to be served; what the time limit leaves unserved is
// counted, and the cell truncated.
func (o *openLoop) Drive(ctx context.Context, r *engine.Cell) {
	select {
	case <-o.sched.ended:
	case <-ctx.Done():
	}
	o.endSchedule(r, errors.Is(ctx.Err(), context.DeadlineExceeded))
	for o.inflight.Load()+o.waiting.Load() > 0 && r.Serving().Err() == nil {
		time.Sleep(time.Millisecond)
	}
	o.unfinished.Store(o.inflight.Load())
	if r.Serving().Err() != nil && context.Cause(ctx) != context.Canceled && o.unfinished.Load() > 0 {
		r.Truncate(fmt.Sprintf("%d arrivals were still unserved %v after the last one", o.unfinished.Load(), min(MaxDrain, r.Spec.MaxTime)))
	}
	r.StopServing()
}

func (o *openLoop) Finish(r *engine.Cell, c *result.Cell, totals engine.Totals) {
	s := r.Spec
	c.Open = &result.OpenLoop{
		Rate: s.Rate, Arrival: s.Arrival, MaxInflight: s.MaxInflight,
		Offered: o.offered.Load(), Dropped: o.dropped.Load(), Unfinished: o.unfinished.Load(),
		ServiceLatencyUs: result.LatencyOf(totals[engine.TagService]), ScheduleLagUs: result.LatencyOf(totals[engine.TagLag]),
	}
}

// serve serves arrivals from the shared schedule. Latency counts from
// the arrival's intended time, so a stalled lock shows in the tail instead
// of slowing the arrivals down (no coordinated omission); the service time
// from the actual start is recorded beside it, and the schedule lag —
// actual send minus intended send, for an arrival a client was free for —
// tells the generator's own lateness from the lock's.
func (o *openLoop) serve(ctx context.Context, r *engine.Cell, w *engine.Client) {
	defer w.Flush()
	defer w.ArmAlarm(ctx, r.Spec.Rate)()
	lock := w.ID() % r.NumLocks()
	warm := impl.WarmingUp(ctx)
	serving := false // counted in flight for the arrival just served
	for {
		taken := w.Now()
		due, admitted, ok := o.take(r, taken) // still in flight, if serving
		if serving {
			o.inflight.Add(-1)
			serving = false
		}
		if !ok || ctx.Err() != nil {
			return
		}
		if !admitted {
			w.FlushBefore(due) // an idle client holds no interval open
			if !w.WaitUntil(ctx, due) {
				o.waiting.Add(-1)
				return
			}
			if !o.admit(r, due) {
				continue
			}
		}
		serving = true
		if w.Picker != nil {
			lock = w.Picker.Pick()
		}
		w.ReadyToWait()
		start := w.Now()
		measured := !due.Before(r.MeasureFrom())
		actx := ctx
		if !measured {
			actx = warm
		}
		if measured {
			w.Record(engine.TagLag, start, start.Sub(later(due, taken)))
		}
		lease, got, err := w.Acquire(actx, r.LockName(lock), start)
		if err != nil {
			if ctx.Err() != nil {
				o.inflight.Add(-1)
				return
			}
			if measured && !errors.Is(err, engine.ErrAbandoned) {
				w.Fail(err)
			}
			continue
		}
		if measured {
			r.Granted(w, lock, start, got, got.Sub(due))
			w.Record(engine.TagService, got, got.Sub(start))
		}
		r.HoldAndRelease(ctx, w, lock, lease, got, measured)
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
