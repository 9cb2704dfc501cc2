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
