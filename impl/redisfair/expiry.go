package redisfair

import (
	"context"
	"errors"
	"net"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// cleanupTimeout bounds giving up an Acquire (the give-up script, the
// unsubscription): long enough for a loaded server to answer, so that no
// entry stays queued, short enough that a dead server cannot hold the
// caller up for long.
const cleanupTimeout = time.Second

// ctxGrace bounds ctxErr's wait for a context whose deadline has passed
// but whose timer has not fired yet.
const ctxGrace = time.Second

// expired reports whether ctx is done or its deadline has passed. go-redis
// (ContextTimeoutEnabled) gives the socket ctx's deadline, so a command
// can fail with an i/o timeout at that deadline while ctx's own timer has
// not marked it done yet: the failure is then the caller's deadline.
func expired(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// ctxErr returns ctx.Err() for a ctx that expired, waiting for a timer
// that is about to fire, so that callers comparing it see ctx's own error.
func ctxErr(ctx context.Context) error {
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

// uncancelled returns a context with ctx's values that neither ctx's
// cancellation nor its deadline ends, bounded by cleanupTimeout: giving
// up must outlive the ctx whose end is usually why.
func uncancelled(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}

// mayHaveLanded reports whether a command that failed with err may still
// have been carried out: only a reply of the server's own (a Redis error)
// or a connection never made says it was not.
func mayHaveLanded(err error) bool {
	var rerr goredis.Error
	if errors.As(err, &rerr) {
		return false
	}
	var op *net.OpError
	return !errors.As(err, &op) || op.Op != "dial"
}
