package redis

import (
	"context"
	"errors"
	"net"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// CleanupTimeout bounds the undoing of an attempt that ended without a
// reply: long enough for a loaded server or test machine to answer, so
// that the attempt's key does not stay held for the TTL, and short enough
// that a dead server cannot hold the caller up for long.
const CleanupTimeout = time.Second

// ctxGrace bounds the wait in CtxErr for a context whose deadline has
// passed but whose timer has not fired yet. It fires within microseconds
// on an idle machine; only a broken Context would need the bound.
const ctxGrace = time.Second

// Expired reports whether ctx is done or its deadline has passed. go-redis
// (ContextTimeoutEnabled) takes ctx's deadline as the socket deadline, so
// a command can fail with an i/o timeout at that deadline while ctx's own
// timer, which runs on another goroutine, has not yet marked ctx done: at
// that moment ctx.Err() is still nil, and the failure is the caller's
// deadline, not the server's.
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

// Uncancelled returns a context with ctx's values that neither ctx's
// cancellation nor its deadline ends, bounded by CleanupTimeout instead.
// Undoing an attempt must outlive the caller's ctx, whose end is usually
// why the attempt is being undone.
func Uncancelled(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), CleanupTimeout)
}

// MayHaveLanded reports whether a command that failed with err may still
// have been carried out by the server: only a reply of the server's own
// (a Redis error) or a connection that was never made says that it was
// not. A timeout, a reset connection or a context that ended while the
// command was on the wire leaves it unknown.
func MayHaveLanded(err error) bool {
	var rerr goredis.Error
	if errors.As(err, &rerr) {
		return false
	}
	var op *net.OpError
	return !errors.As(err, &op) || op.Op != "dial"
}

// undo runs the compare-and-delete for token on cl, on a context that
// ctx's end does not cut short (Uncancelled). It is for an attempt whose
// SET NX may have landed without its reply reaching the client: only this
// attempt's token is deleted, so a lock someone else holds is left alone.
// The command is counted like any other (Dial's hook).
func undo(ctx context.Context, cl goredis.Scripter, key, token string) error {
	ctx, cancel := Uncancelled(ctx)
	defer cancel()
	return ReleaseScript.Run(ctx, cl, []string{key}, token).Err()
}
