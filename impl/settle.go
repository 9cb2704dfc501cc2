package impl

import "context"

// Settler is implemented by Lockers that can tell whether a blocked Acquire
// is waiting with nothing in flight: queued on the server, its watch set (or
// asleep between polls), and no notification delivered but unread.
//
// The burst scenario polls it from another goroutine: the first holder keeps
// the lock until every other client is settled, and each later holder hands
// on only when all remaining waiters are settled again. That turns the herd
// counts into exact figures rather than timing-dependent ones. Settled must
// be safe for concurrent use and must not block.
type Settler interface {
	Settled() bool
}

// Preparer is implemented by Lockers that keep per-lock state on the server
// (ZooKeeper's parent nodes). The harness calls Prepare on one client with
// every lock name before the clock starts, so that set-up stays out of the
// measurement.
type Preparer interface {
	Prepare(ctx context.Context, names []string) error
}
