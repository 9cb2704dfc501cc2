package engine

import (
	"context"
	"errors"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// renewEvery is how often a holder renews its lease under --renew: a
// third of the TTL, as Redisson's watchdog does, so that one late or
// failed renewal still leaves a renewal's worth of lease.
func renewEvery(ttl time.Duration) time.Duration { return ttl / 3 }

// hold keeps the lock for d. With --renew, a lease that can be renewed
// (impl.Renewer) is renewed every renewEvery(TTL) meanwhile, from the
// holder's own goroutine, as a watchdog would. A renewal that finds the
// lock no longer ours ends the hold at once: the holder has learnt it
// lost the lock and stops working (it still releases, which undoes what
// it may hold on a Redlock minority).
func (r *Cell) hold(ctx context.Context, w *Client, lock int, lease impl.Lease, d time.Duration, measured bool) {
	rn, ok := lease.(impl.Renewer)
	if !r.Spec.Renew || !ok {
		w.Pause(ctx, d)
		return
	}
	every := renewEvery(r.Spec.Config.TTL)
	start := time.Now()
	end := start.Add(d)
	defer func() {
		if measured {
			w.renewHeld += time.Since(start)
		}
	}()
	for ctx.Err() == nil {
		if left := time.Until(end); left <= every {
			w.Pause(ctx, left)
			return
		}
		if w.Pause(ctx, every); ctx.Err() != nil {
			return
		}
		t := time.Now()
		err := rn.Renew(ctx)
		now := time.Now()
		w.recordOp(result.OpRenew, int32(lock), t, now, outcome(err), nil)
		if measured {
			w.renewals++
			w.Record(tagRenew, now, now.Sub(t))
		}
		switch {
		case err == nil:
		case errors.Is(err, impl.ErrLockLost):
			if measured {
				w.renewLost++
			}
			return
		case ctx.Err() != nil:
			return
		case measured:
			// The server did not answer in time: the lease may still be
			// ours; the next renewal will tell.
			w.renewErrors++
			w.Fail(err)
		}
	}
}

// renewFigures is what the cell's renewals cost, nil without --renew.
func (r *Cell) renewFigures() *result.Renew {
	if !r.Spec.Renew {
		return nil
	}
	out := &result.Renew{}
	var held time.Duration
	for _, w := range r.Clients {
		out.Count += w.renewals
		out.Lost += w.renewLost
		out.Errors += w.renewErrors
		held += w.renewHeld
	}
	out.HeldS = held.Seconds()
	return out
}

// abandonFigures counts the acquisitions given up, nil when no client
// could give up; the accumulator derives their wait and cost.
func (r *Cell) abandonFigures() *result.Abandon {
	var n, rt int64
	for _, w := range r.Clients {
		n += w.abandons.Load()
		rt += w.abandonRT
	}
	if n == 0 && r.Spec.AcquireTimeout <= 0 {
		return nil
	}
	return &result.Abandon{TimeoutMs: float64(r.Spec.AcquireTimeout) / float64(time.Millisecond), Count: n, RoundTrips: rt}
}
