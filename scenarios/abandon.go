package scenarios

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

func init() {
	engine.RegisterScenario(engine.Load(engine.LoadSpec{Name: "abandon", Kind: result.KindBurst, NewShape: func() engine.Shape { return new(abandonRun) }, MinClients: 3,
		NoTimeout:   "its waiters give up on its own schedule (every other one, one at a time)",
		Description: "a full queue in which every other waiter gives up: clients queue in id order behind client 0, the odd ones (but the last) leave one by one, the rest get the lock in queue order"}))
}

// abandonShape is the abandon scenario: waiters that give up while queued
// (Redisson's tryLock with a wait, Curator's acquire(time, unit)). Client
// i joins the queue once client i−1 waits in it, so that queue order is id
// order; once all are in, each odd client but the last gives up, one at a
// time, every other waiter settling again in between; then the lock
// passes down what is left of the queue as in a burst. Every step meeting
// a settled queue makes the wake-ups exact, and every abandoner having a
// successor makes each leave a wake-up in a predecessor-watch queue.
// Afterwards the servers must hold nothing under the cell's namespace.
// abandonRun is that shape in a cell, with the cell's state.
type abandonRun struct {
	engine.Barrier

	gates  []chan struct{}      // client i may join the queue
	leave  []context.CancelFunc // cancels an abandoner's wait; nil for others
	ready  chan struct{}        // the abandoners have gone: the holder may release
	order  []int32              // client ids in grant order
	grants atomic.Int32
	left   int64 // what the servers held afterwards, -1 unknown
}

// abandons reports whether client i of n gives up: the odd ones but the
// last, so that each has a successor in the queue.
func abandons(i, n int) bool { return i%2 == 1 && i < n-1 }

func (a *abandonRun) Prepare(r *engine.Cell) {
	r.Spec.Warmup, r.Spec.Duration = 0, 0
	n := len(r.Clients)
	a.gates, a.leave = make([]chan struct{}, n), make([]context.CancelFunc, n)
	a.ready, a.order, a.left = make(chan struct{}), make([]int32, n), -1
	for i, w := range r.Clients {
		a.gates[i] = make(chan struct{})
		if abandons(i, n) {
			var leave context.Context
			leave, a.leave[i] = context.WithCancel(context.Background())
			w.SetLeave(leave)
		}
	}
	if r.Driver.Theory != nil {
		r.BeforeRelease = func(ctx context.Context) { a.Settle(ctx, r) }
	}
	r.AfterClients = func(ctx context.Context) { a.countLeftovers(ctx, r) }
}

func (a *abandonRun) Client(ctx context.Context, r *engine.Cell, w *engine.Client) {
	defer w.Flush()
	select {
	case <-a.gates[w.ID()]:
	case <-ctx.Done():
		w.MarkDone()
		return
	}
	start := time.Now()
	var lease impl.Lease
	for {
		var err error
		if lease, _, err = w.Acquire(ctx, r.LockName(0), time.Now()); err == nil {
			break
		}
		if ctx.Err() != nil || errors.Is(err, engine.ErrAbandoned) {
			w.MarkDone()
			return
		}
		w.Fail(err) // tried again: it joins the queue's end
		w.Backoff(ctx, r.Spec.Config.Retry)
	}
	got := time.Now()
	r.Granted(w, 0, start, got, got.Sub(start))
	a.order[a.grants.Add(1)-1] = int32(w.ID())
	w.MarkDone()
	if w.ID() == 0 {
		select { // the first holder keeps the lock until the leavers left
		case <-a.ready:
		case <-ctx.Done():
		}
	}
	r.HoldAndRelease(ctx, w, 0, lease, got, true)
}

// Drive lets the clients join the queue in id order, then has the
// abandoners leave one at a time, each step waiting for a settled queue.
func (a *abandonRun) Drive(ctx context.Context, r *engine.Cell) {
	defer close(a.ready)
	for i := range r.Clients {
		close(a.gates[i])
		a.SettleUpTo(ctx, r, i)
	}
	for i, leave := range a.leave {
		if leave == nil {
			continue
		}
		leave()
		for !r.Clients[i].IsDone() && ctx.Err() == nil {
			time.Sleep(50 * time.Microsecond)
		}
		a.SettleUpTo(ctx, r, len(r.Clients)-1)
	}
}

// countLeftovers asks the driver what the servers still hold under the
// cell's namespace, with every client done but still connected: a queue
// node or key left now was left by a client, not taken by a session's end.
func (a *abandonRun) countLeftovers(ctx context.Context, r *engine.Cell) {
	if r.Driver.Residue == nil || ctx.Err() != nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if n, err := r.Driver.Residue(cctx, r.Spec.Config.Servers, r.Spec.Config.Namespace); err == nil {
		a.left = int64(n)
	}
}

// Finish adds who got the lock in which order, what was left behind, and
// what theory predicts: each leave wakes Theory.Abandon(n) waiters with n
// clients queued, then the burst of those left.
func (a *abandonRun) Finish(r *engine.Cell, c *result.Cell, _ engine.Totals) {
	if c.Abandon == nil {
		c.Abandon = &result.Abandon{}
	}
	c.Abandon.Leftover = a.left
	for _, id := range a.order[:a.grants.Load()] {
		g := c.Abandon.Granted
		if len(g) > 0 && int(id) < g[len(g)-1] {
			c.Abandon.OutOfOrder++
		}
		c.Abandon.Granted = append(g, int(id))
	}
	c.Settle = a.Outcome()
	t := r.Driver.Theory
	if t == nil {
		return
	}
	n, queued := len(r.Clients), len(r.Clients)
	var wake float64
	for i := range n {
		if abandons(i, n) {
			per, ok := t.Abandon(float64(queued))
			if !ok {
				return
			}
			wake += per
			queued--
		}
	}
	wake += t.Burst(float64(queued))
	w := int64(wake + 0.5)
	c.TheoryWakeups = &w
}
