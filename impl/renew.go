package impl

import "context"

// Renewer is implemented by Leases that can be extended while held: the
// holder's watchdog (Redisson's, redsync's Extend). The harness calls
// Renew every TTL/3 while a holder works when asked to (--renew), from the
// holder's goroutine.
//
// Renew extends the grant by the configured TTL from now, but only if it
// is still this lease's: it returns an error wrapping ErrLockLost when the
// lock expired or was taken meanwhile, and the holder must stop working.
// Cancelling ctx ends a renewal in flight with ctx's error, which says
// nothing about the lease.
type Renewer interface {
	Renew(ctx context.Context) error
}
