package impl

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
