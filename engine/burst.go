package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

func init() {
	RegisterScenario(loadScenario{name: "burst", kind: result.KindBurst, newShape: func() shape { return new(burstRun) },
		noTimeout:   "the lock passes down the whole queue once and its theory counts assume no waiter gives up",
		description: "the herd: all clients queue at once, the first holder waits until all are queued, then the lock passes down the queue once"})
}

// burstRun is the burst scenario's shape in a cell: every client acquires
// once; the lock passes down a full queue, each hand-off meeting every
// remaining waiter settled, so the herd's counts come out exact.
type burstRun struct {
	settleBarrier
	grants atomic.Int64
}

// settleBarrier holds each hand-off of a queue (the burst's, the abandon
// scenario's) until the remaining waiters have settled, and says how that
// went.
type settleBarrier struct {
	state atomic.Int32 // 0 exact, 1 a wait timed out, 2 the driver cannot say
}

// outcome is Cell.Settle's word for how the barrier went.
func (b *settleBarrier) outcome() string {
	return [...]string{"exact", "timeout", "none"}[b.state.Load()]
}

// prepare drops the warm-up (one acquisition each leaves nothing to warm)
// and, for drivers whose waiters are woken, holds each release until the
// remaining waiters have settled again.
func (b *burstRun) prepare(r *cellRun) {
	r.spec.Warmup, r.spec.Duration = 0, 0
	if r.driver.Theory != nil {
		r.beforeRelease = func(ctx context.Context) { b.settle(ctx, r) }
	}
}

func (b *burstRun) drive(context.Context, *cellRun)                   {}
func (b *burstRun) client(ctx context.Context, r *cellRun, w *worker) { b.acquireOnce(ctx, r, w) }

// finish adds what theory predicts for one lock, and how the hand-off
// barrier went.
func (b *burstRun) finish(r *cellRun, c *result.Cell, _ [nTags]*hdrhistogram.Histogram) {
	if r.spec.Locks != 1 {
		return
	}
	if t := r.driver.Theory; t != nil {
		n := t.BurstWakeups(r.spec.Clients)
		c.TheoryWakeups = &n
	}
	c.Settle = b.outcome()
}

// acquireOnce acquires once. The first holder keeps the lock until every other
// client is queued and settled; each holder hands on only when all
// remaining waiters have settled again, so every release meets a full,
// armed queue — the herd in its exact form.
func (b *burstRun) acquireOnce(ctx context.Context, r *cellRun, w *worker) {
	defer w.flush()
	lock := w.id % r.names.len()
	start := time.Now()
	var lease impl.Lease
	for {
		var err error
		lease, _, err = w.acquire(ctx, r.names.at(lock), time.Now())
		if err == nil {
			break
		}
		if ctx.Err() != nil || errors.Is(err, errAbandoned) {
			w.done.Store(true) // each client asks once: one given up is done
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
	if b.grants.Add(1) == 1 {
		b.settle(ctx, r)
	}
	r.holdAndRelease(ctx, w, lock, lease, got, true)
}

// settle waits until every client — of every shard, in a sharded cell
// of one lock — still waiting reports Settled, polling.
// For implementations that watch, that is the exact form of the herd: no
// notification in flight. Pollers have no notifications to lose and are
// never all asleep at once for long; for them a client counts once it has
// been seen waiting, and only the first holder waits for that.
func (b *settleBarrier) settle(ctx context.Context, r *cellRun) {
	if sh := r.spec.Shard; sh != nil && r.names.len() == 1 {
		local := func(ctx context.Context) { b.localSettle(ctx, r) }
		if err := sh.Coord.Settle(ctx, r.meeting(), local); err != nil && ctx.Err() == nil {
			b.state.CompareAndSwap(0, 1)
		}
		return
	}
	b.localSettle(ctx, r)
}

// localSettle is settle over this process's clients.
func (b *settleBarrier) localSettle(ctx context.Context, r *cellRun) {
	polling := r.driver.Theory == nil
	for _, w := range r.workers {
		if w.settler == nil {
			b.state.Store(2)
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
			b.state.CompareAndSwap(0, 1)
			return
		}
		time.Sleep(50 * time.Microsecond)
	}
}
