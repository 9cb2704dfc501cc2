package impl

import (
	"sync/atomic"

	"github.com/lockbench/lockbench/result"
)

// Counters are what one client counts while it runs. Every field is an
// atomic so the hot path neither locks nor allocates, and a progress reader
// may look at any time. Fields an implementation has no use for stay zero.
type Counters struct {
	RoundTrips    atomic.Int64 // requests sent to a server (commands, zk ops)
	Retries       atomic.Int64 // acquire attempts that did not get the lock
	Notifications atomic.Int64 // server-pushed events received by the connection
	Lost          atomic.Int64 // leases found expired or taken at release

	// ZooKeeper waiters.
	Wakeups        atomic.Int64 // notifications a waiting client acted on
	ReleaseWakeups atomic.Int64 // ... whose re-read showed a node gone
	ArrivalWakeups atomic.Int64 // ... whose re-read showed only new nodes
	WastedWakeups  atomic.Int64 // wake-ups after which the client still waits
	ChildrenRead   atomic.Int64 // child names returned by getChildren
	ZKOps          atomic.Int64 // ZooKeeper requests sent (pings excluded)
	SessionLost    atomic.Int64 // sessions that expired under a client
	FailedCreates  atomic.Int64 // creates of a lock node refused because it exists (NodeExists)

	// Redlock.
	NoQuorum        atomic.Int64 // attempts that got fewer than a majority
	ValidityExpired atomic.Int64 // attempts with a majority but no validity left
	SplitVotes      atomic.Int64 // attempts with some votes but not a majority
}

// Counts is a plain snapshot of Counters, summed over clients; the type
// lives with the result data.
type Counts = result.Counts

// Snapshot reads every counter once.
func (c *Counters) Snapshot() Counts {
	return Counts{
		RoundTrips:      c.RoundTrips.Load(),
		Retries:         c.Retries.Load(),
		Notifications:   c.Notifications.Load(),
		Lost:            c.Lost.Load(),
		Wakeups:         c.Wakeups.Load(),
		ReleaseWakeups:  c.ReleaseWakeups.Load(),
		ArrivalWakeups:  c.ArrivalWakeups.Load(),
		WastedWakeups:   c.WastedWakeups.Load(),
		ChildrenRead:    c.ChildrenRead.Load(),
		ZKOps:           c.ZKOps.Load(),
		SessionLost:     c.SessionLost.Load(),
		FailedCreates:   c.FailedCreates.Load(),
		NoQuorum:        c.NoQuorum.Load(),
		ValidityExpired: c.ValidityExpired.Load(),
		SplitVotes:      c.SplitVotes.Load(),
	}
}
