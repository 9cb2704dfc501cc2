package scenarios

import (
	"context"
	"errors"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// Hot is the closed loop on --locks locks: what the latency fault loads
// its lock with, too.
var Hot = engine.Load(engine.LoadSpec{Name: "hot", Kind: result.KindClosed, Shardable: true, NewShape: func() engine.Shape { return closedLoop{} },
	Description: "closed loop; client i uses lock i mod --locks (default 1: every client on one lock)"})

func init() { engine.RegisterScenario(Hot) }

// closedLoop is the hot scenario's shape: every client loops acquire →
// hold → release → think on lock id mod --locks until the cell ends. The
// keys scenario is the same loop with each lock drawn afresh.
type closedLoop struct{}

func (closedLoop) Prepare(*engine.Cell)                                         {}
func (closedLoop) Drive(context.Context, *engine.Cell)                          {}
func (closedLoop) Finish(*engine.Cell, *result.Cell, engine.Totals)             {}
func (closedLoop) Client(ctx context.Context, r *engine.Cell, w *engine.Client) { loop(ctx, r, w) }

// loop is acquire → hold → release → think until the cell ends.
func loop(ctx context.Context, r *engine.Cell, w *engine.Client) {
	defer w.Flush()
	lock := w.ID() % r.NumLocks()
	warm := impl.WarmingUp(ctx)
	for ctx.Err() == nil {
		if w.Picker != nil {
			lock = w.Picker.Pick()
		}
		w.ReadyToWait()
		start := w.Reading()
		measured := !start.Before(r.MeasureFrom())
		if d := r.Deadline(); !d.IsZero() && !start.Before(d) {
			return
		}
		if measured && !r.Spend() {
			return
		}
		actx := ctx
		if !measured {
			actx = warm
		}
		lease, got, err := w.Acquire(actx, r.LockName(lock), start)
		if err != nil {
			if r.Over(ctx, got) {
				return
			}
			if errors.Is(err, engine.ErrAbandoned) {
				// Given up, as tryLock's caller does: it comes back after
				// its think time, with no back-off (no error happened).
				w.Pause(ctx, r.Spec.ThinkDist.Sample(w.Rand()))
				continue
			}
			if measured {
				w.Fail(err)
			}
			w.Backoff(ctx, r.Spec.Config.Retry)
			continue
		}
		if measured {
			r.Granted(w, lock, start, got, got.Sub(start))
		}
		r.HoldAndRelease(ctx, w, lock, lease, got, measured)
		w.Pause(ctx, r.Spec.ThinkDist.Sample(w.Rand()))
	}
}
