package engine

import (
	"context"
	"sync/atomic"
	"time"
)

// Barrier holds each hand-off of a queue (the burst's, the abandon
// scenario's) until the remaining waiters have settled, and says how that
// went.
type Barrier struct {
	state atomic.Int32 // 0 exact, 1 a wait timed out, 2 the driver cannot say
}

// Queued is a shape whose hand-offs wait on a Barrier: in a sharded cell
// of one lock, this process answers the other shards' settle calls with
// it.
type Queued interface{ HandoffBarrier() *Barrier }

// Outcome is result.Cell.Settle's word for how the barrier went.
func (b *Barrier) Outcome() string {
	return [...]string{"exact", "timeout", "none"}[b.state.Load()]
}

// Settle waits until every client — of every shard, in a sharded cell
// of one lock — still waiting reports Settled, polling.
// For implementations that watch, that is the exact form of the herd: no
// notification in flight. Pollers have no notifications to lose and are
// never all asleep at once for long; for them a client counts once it has
// been seen waiting, and only the first holder waits for that.
func (b *Barrier) Settle(ctx context.Context, r *Cell) {
	if sh := r.Spec.Shard; sh != nil && r.names.len() == 1 {
		local := func(ctx context.Context) { b.localSettle(ctx, r) }
		if err := sh.Coord.Settle(ctx, r.meeting(), local); err != nil && ctx.Err() == nil {
			b.state.CompareAndSwap(0, 1)
		}
		return
	}
	b.localSettle(ctx, r)
}

// localSettle is settle over this process's clients.
func (b *Barrier) localSettle(ctx context.Context, r *Cell) {
	polling := r.Driver.Theory == nil
	for _, w := range r.Clients {
		if w.settler == nil {
			b.state.Store(2)
			return
		}
	}
	deadline := time.Now().Add(DefaultSettleTimeout)
	for {
		all := true
		for _, w := range r.Clients {
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

// SettleUpTo waits until clients 0…i are each done (holding, or gone) or
// settled in the queue — a poller once seen asleep between polls. A
// driver that cannot say is given a few retry delays.
func (a *Barrier) SettleUpTo(ctx context.Context, r *Cell, i int) {
	deadline := time.Now().Add(DefaultSettleTimeout)
	for ctx.Err() == nil {
		all := true
		for _, w := range r.Clients[:i+1] {
			if w.settler == nil {
				a.state.Store(2)
				time.Sleep(5 * r.Spec.Config.Retry)
				return
			}
			if !w.done.Load() && !w.settler.Settled() {
				all = false
				break
			}
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			a.state.CompareAndSwap(0, 1)
			return
		}
		time.Sleep(50 * time.Microsecond)
	}
}
