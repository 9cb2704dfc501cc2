package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

func init() {
	RegisterScenario(rateScenario{loadScenario{name: "rate", kind: result.KindOpen, shape: openLoop{},
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

// openLoop is the rate scenario's shape: a generator fires arrivals at the
// rate, free clients serve them, and every arrival let in before the end
// is served, however late.
type openLoop struct{}

func (openLoop) prepare(r *cellRun) {
	r.arrivals = make(chan int64, r.spec.MaxInflight)
	r.lag = newHist()
	for _, w := range r.workers {
		w.picker = r.spec.Keys.NewPicker(r.spec.Locks, w.rng)
	}
}

func (openLoop) client(ctx context.Context, r *cellRun, w *worker) { r.openLoop(ctx, w) }

// MaxDrain bounds how long the open loop serves arrivals let in before its
// end; what is still unserved then is counted unfinished.
const MaxDrain = 10 * time.Second

// serveContext lets the clients outlive the arrivals: every arrival let in
// before the end is served, however late, or its tail would go missing
// exactly where a stalled lock shows (coordinated omission again) — within
// MaxDrain (or the cell time limit, if shorter) after the last arrival.
func (openLoop) serveContext(parent context.Context, r *cellRun) (context.Context, context.CancelFunc) {
	end := r.deadline
	if end.IsZero() {
		end = r.start.Add(r.spec.Warmup + r.spec.MaxTime)
	}
	return context.WithDeadline(parent, end.Add(min(MaxDrain, r.spec.MaxTime)))
}

// drive fires the arrivals, then waits for those in flight to be served;
// what the time limit leaves unserved is counted, and the cell truncated.
func (openLoop) drive(ctx context.Context, r *cellRun) {
	r.generate(ctx)
	for r.inflight.Load() > 0 && r.wctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	r.unfinished.Store(r.inflight.Load())
	if r.wctx.Err() != nil && context.Cause(ctx) != context.Canceled && r.unfinished.Load() > 0 {
		r.truncated = fmt.Sprintf("%d arrivals were still unserved %v after the last one", r.unfinished.Load(), min(MaxDrain, r.spec.MaxTime))
	}
	r.wcancel()
}

func (openLoop) finish(r *cellRun, c *result.Cell, totals [nTags]*hdrhistogram.Histogram) {
	s := r.spec
	c.Open = &result.OpenLoop{
		Rate: s.Rate, Arrival: s.Arrival, MaxInflight: s.MaxInflight,
		Offered: r.offered.Load(), Dropped: r.dropped.Load(), Unfinished: r.unfinished.Load(),
		ServiceLatencyUs: result.LatencyOf(totals[tagService]), ScheduleLagUs: result.LatencyOf(r.lag),
	}
}

// openLoop serves arrivals the generator dispatches. Latency counts from
// the arrival's intended time, so a stalled lock shows in the tail instead
// of slowing the arrivals down (no coordinated omission); the service time
// from the actual start is recorded beside it.
func (r *cellRun) openLoop(ctx context.Context, w *worker) {
	defer w.flush()
	lock := w.id % r.names.len()
	warm := impl.WarmingUp(ctx)
	for {
		var due time.Time
		select {
		case ns := <-r.arrivals:
			due = r.start.Add(time.Duration(ns))
		default:
			// No arrival waiting: hand on this interval's latencies before
			// idling, or an idle client would hold its interval open.
			w.flush()
			select {
			case <-ctx.Done():
				return
			case ns := <-r.arrivals:
				due = r.start.Add(time.Duration(ns))
			}
		}
		if w.picker != nil {
			lock = w.picker.Pick()
		}
		w.readyToWait()
		start := time.Now()
		measured := !due.Before(r.measureFrom)
		actx := ctx
		if !measured {
			actx = warm
		}
		lease, err := w.acquire(actx, r.names.at(lock))
		got := time.Now()
		if err != nil {
			r.inflight.Add(-1)
			if ctx.Err() != nil {
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
