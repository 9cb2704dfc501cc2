package engine

import (
	"context"
	"errors"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

func init() {
	RegisterScenario(loadScenario{name: "hot", kind: result.KindClosed, newShape: func() shape { return closedLoop{} },
		description: "closed loop; client i uses lock i mod --locks (default 1: every client on one lock)"})
}

// closedLoop is the hot scenario's shape: every client loops acquire →
// hold → release → think on lock id mod --locks until the cell ends. The
// keys scenario is the same loop with each lock drawn afresh.
type closedLoop struct{}

func (closedLoop) prepare(*cellRun)                                              {}
func (closedLoop) drive(context.Context, *cellRun)                               {}
func (closedLoop) finish(*cellRun, *result.Cell, [nTags]*hdrhistogram.Histogram) {}
func (closedLoop) client(ctx context.Context, r *cellRun, w *worker)             { r.closedLoop(ctx, w) }

// closedLoop is acquire → hold → release → think until the cell ends.
func (r *cellRun) closedLoop(ctx context.Context, w *worker) {
	defer w.flush()
	lock := w.id % r.names.len()
	warm := impl.WarmingUp(ctx)
	for ctx.Err() == nil {
		if w.picker != nil {
			lock = w.picker.Pick()
		}
		w.readyToWait()
		start := w.reading()
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
		lease, got, err := w.acquire(actx, r.names.at(lock), start)
		if err != nil {
			if r.over(ctx, got) {
				return
			}
			if errors.Is(err, errAbandoned) {
				// Given up, as tryLock's caller does: it comes back after
				// its think time, with no back-off (no error happened).
				w.streak = 0
				w.pause(ctx, r.spec.ThinkDist.Sample(w.rng))
				continue
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
