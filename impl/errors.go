package impl

import (
	"context"
	"errors"
	"fmt"
)

// Sentinel errors shared by every implementation. Implementations wrap them
// with %w so that callers branch with errors.Is and Class names the kind.
var (
	// ErrLockLost means a lease expired or was taken before Release.
	ErrLockLost = errors.New("impl: lock lost")
	// ErrNoQuorum means too few Redlock masters granted the lock.
	ErrNoQuorum = errors.New("impl: no quorum")
	// ErrSessionLost means the ZooKeeper session expired under the client.
	ErrSessionLost = errors.New("impl: session lost")
	// ErrUnreachable means a server could not be reached at all.
	ErrUnreachable = errors.New("impl: server unreachable")
	// ErrHeld means a Try found the lock held.
	ErrHeld = errors.New("impl: lock held")
	// ErrStatsRefused means a server refused to report its counters.
	ErrStatsRefused = errors.New("impl: server refused to report counters")
)

// Error classes reported per cell.
const (
	ClassNoQuorum    = "no_quorum"
	ClassSessionLost = "session_lost"
	ClassLockLost    = "lock_lost"
	ClassUnreachable = "unreachable"
	ClassTimeout     = "timeout"
	ClassCanceled    = "canceled"
	ClassOther       = "other"
)

// Class names the kind of err for per-cell error counts.
func Class(err error) string {
	switch {
	case errors.Is(err, ErrNoQuorum):
		return ClassNoQuorum
	case errors.Is(err, ErrSessionLost):
		return ClassSessionLost
	case errors.Is(err, ErrLockLost):
		return ClassLockLost
	case errors.Is(err, ErrUnreachable):
		return ClassUnreachable
	case errors.Is(err, context.DeadlineExceeded):
		return ClassTimeout
	case errors.Is(err, context.Canceled):
		return ClassCanceled
	default:
		var t interface{ Timeout() bool }
		if errors.As(err, &t) && t.Timeout() {
			return ClassTimeout
		}
		return ClassOther
	}
}

// NodeError is an error from one server of several (a Redlock master, a
// ZooKeeper ensemble member). It keeps the node so reports can say which
// server failed how; join several with errors.Join.
type NodeError struct {
	Node int    // index in the server list
	Addr string // the server's address
	Err  error
}

func (e *NodeError) Error() string { return fmt.Sprintf("node %d (%s): %v", e.Node, e.Addr, e.Err) }

// Unwrap returns the underlying error.
func (e *NodeError) Unwrap() error { return e.Err }
