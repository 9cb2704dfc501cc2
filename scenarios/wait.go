package scenarios

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/result"
)

func init() {
	engine.RegisterScenario(engine.Load(engine.LoadSpec{Name: "wait", Kind: result.KindWait, MinClients: 2, ServerIdle: true,
		NewShape:    func() engine.Shape { return new(waitRun) },
		NoTimeout:   "its waiters wait for the whole cell: what they cost while they wait is the figure",
		Description: "what waiting costs: client 0 holds the lock for the whole --duration while the others wait for it; per waiting client and second, lockbench's CPU, the servers' CPU above their rate at rest, requests and notifications"}))
}

// waitRun is the wait scenario's shape: client 0 acquires and holds until
// the cell's deadline; every other client starts waiting once it holds,
// and gives up at the deadline, before the holder releases, so that no
// hand-off is in the figures. rueidislock's waiters spun at over 100 % of
// a core (rueidis#602) and redsync's pollers starve one another at 200
// requests a second on one key (redsync#102): per waiter-second, a
// watcher costs almost nothing, a poller its retry rate.
type waitRun struct {
	held    chan struct{}
	waiting atomic.Int32
	heldAt  atomic.Int64 // unix ns
	granted atomic.Int64 // waiters granted during the wait
}

func (s *waitRun) Prepare(r *engine.Cell) {
	r.Spec.Warmup = 0
	s.held = make(chan struct{})
	// The holder keeps the lock until the clients' context ends at the
	// deadline; the waiters have given up by then.
	r.BeforeRelease = func(ctx context.Context) { <-ctx.Done() }
}

func (s *waitRun) Drive(context.Context, *engine.Cell) {}

func (s *waitRun) Client(ctx context.Context, r *engine.Cell, w *engine.Client) {
	defer w.Flush()
	if w.ID() == 0 {
		start := time.Now()
		lease, got, err := w.Acquire(ctx, r.LockName(0), start)
		if err != nil {
			w.Fail(err)
			close(s.held)
			return
		}
		r.Granted(w, 0, start, got, got.Sub(start))
		s.heldAt.Store(got.UnixNano())
		close(s.held)
		r.HoldAndRelease(ctx, w, 0, lease, got, true)
		return
	}
	select {
	case <-s.held:
	case <-ctx.Done():
		return
	}
	s.waiting.Add(1)
	for ctx.Err() == nil {
		start := time.Now()
		lease, got, err := w.Acquire(ctx, r.LockName(0), start)
		if err != nil {
			if ctx.Err() != nil {
				return // the deadline: the wait is over
			}
			w.Fail(err) // counted, then waited on after a pause
			w.Backoff(ctx, r.Spec.Config.Retry)
			continue
		}
		// Granted while the holder holds: its lease ended under it.
		s.granted.Add(1)
		r.Granted(w, 0, start, got, got.Sub(start))
		r.HoldAndRelease(ctx, w, 0, lease, got, true)
	}
}

// Finish states how many waited and for how long: from the holder's grant
// to the deadline.
func (s *waitRun) Finish(r *engine.Cell, c *result.Cell, _ engine.Totals) {
	at := s.heldAt.Load()
	if at == 0 || r.Deadline().IsZero() {
		return
	}
	c.Wait = &result.WaitFigures{Waiters: int(s.waiting.Load()), WaitS: r.Deadline().Sub(time.Unix(0, at)).Seconds(), Granted: s.granted.Load()}
}
