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
	engine.RegisterScenario(engine.Load(engine.LoadSpec{Name: "burst", Kind: result.KindBurst, Shardable: true, Repeatable: true, Merge: mergeBursts, WarmupRun: true, NewShape: func() engine.Shape { return new(burstRun) },
		NoTimeout:   "the lock passes down the whole queue once and its theory counts assume no waiter gives up",
		Description: "the herd: all clients queue at once, the first holder waits until all are queued, then the lock passes down the queue once"}))
}

// burstRun is the burst scenario's shape in a cell: every client acquires
// once; the lock passes down a full queue, each hand-off meeting every
// remaining waiter settled, so the herd's counts come out exact.
type burstRun struct {
	engine.Barrier
	grants atomic.Int64
}

// HandoffBarrier is the barrier the burst's hand-offs wait on.
func (b *burstRun) HandoffBarrier() *engine.Barrier { return &b.Barrier }

// Prepare drops the warm-up time (a burst's warm-up is a whole burst,
// discarded: LoadSpec.WarmupRun) and, for drivers whose waiters are woken,
// holds each release until the remaining waiters have settled again.
func (b *burstRun) Prepare(r *engine.Cell) {
	r.Spec.Warmup, r.Spec.Duration = 0, 0
	if r.Driver.Theory != nil {
		r.BeforeRelease = func(ctx context.Context) { b.Settle(ctx, r) }
	}
}

func (b *burstRun) Drive(context.Context, *engine.Cell) {}
func (b *burstRun) Client(ctx context.Context, r *engine.Cell, w *engine.Client) {
	b.acquireOnce(ctx, r, w)
}

// Finish adds what theory predicts for one lock, and how the hand-off
// barrier went.
func (b *burstRun) Finish(r *engine.Cell, c *result.Cell, _ engine.Totals) {
	if r.Spec.Locks != 1 {
		return
	}
	if t := r.Driver.Theory; t != nil {
		n := t.BurstWakeups(r.Spec.Clients)
		c.TheoryWakeups = &n
	}
	c.Settle = b.Outcome()
}

// acquireOnce acquires once. The first holder keeps the lock until every other
// client is queued and settled; each holder hands on only when all
// remaining waiters have settled again, so every release meets a full,
// armed queue — the herd in its exact form.
func (b *burstRun) acquireOnce(ctx context.Context, r *engine.Cell, w *engine.Client) {
	defer w.Flush()
	lock := w.ID() % r.NumLocks()
	start := time.Now()
	var lease impl.Lease
	for {
		var err error
		lease, _, err = w.Acquire(ctx, r.LockName(lock), time.Now())
		if err == nil {
			break
		}
		if ctx.Err() != nil || errors.Is(err, engine.ErrAbandoned) {
			w.MarkDone() // each client asks once: one given up is done
			return
		}
		// Counted, then tried again: each client acquires once, and an
		// error (a Redlock attempt without quorum under the storm) is part
		// of what it took. The latency runs from the first try.
		w.Fail(err)
		w.MarkQueued() // it has tried: it is in the queue's fray
		w.Backoff(ctx, r.Spec.Config.Retry)
	}
	got := time.Now()
	r.Granted(w, lock, start, got, got.Sub(start))
	w.MarkDone()
	if b.grants.Add(1) == 1 {
		b.Settle(ctx, r)
	}
	r.HoldAndRelease(ctx, w, lock, lease, got, true)
}

// mergeBursts adds to a repeated burst what each repeat's shape added:
// theory's wake-ups, summed, and the barrier's outcome, the worst of them
// ("exact" only when every repeat's was).
func mergeBursts(into *result.Cell, repeats []result.Cell) {
	var theory int64
	haveTheory := false
	for _, c := range repeats {
		if c.TheoryWakeups != nil {
			theory += *c.TheoryWakeups
			haveTheory = true
		}
		if into.Settle == "" || into.Settle == "exact" {
			into.Settle = c.Settle
		}
	}
	if haveTheory {
		into.TheoryWakeups = &theory
	}
}
