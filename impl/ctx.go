package impl

import (
	"context"
	"time"
)

// ctxGrace bounds the wait in CtxErr for a context whose deadline has
// passed but whose timer has not fired yet. It fires within microseconds
// on an idle machine; only a broken Context would need the bound.
const ctxGrace = time.Second

// Expired reports whether ctx is done or its deadline has passed. A client
// library that takes ctx's deadline as its socket's (go-redis with
// ContextTimeoutEnabled, a request's deadline in nats.go or client-go) can
// fail at that deadline while ctx's own timer, which runs on another
// goroutine, has not yet marked ctx done: at that moment ctx.Err() is
// still nil, and the failure is the caller's deadline, not the server's.
func Expired(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// CtxErr returns ctx.Err() for a ctx that Expired. When the deadline has
// passed but ctx's timer has not fired yet, it waits for ctx to be done:
// the timer is about to fire, and returning ctx.Err() itself keeps callers
// that compare it, or look at ctx afterwards, consistent. It returns nil
// when ctx has not expired.
func CtxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); !ok || time.Now().Before(d) {
		return nil
	}
	t := time.NewTimer(ctxGrace)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return context.DeadlineExceeded
	}
}
