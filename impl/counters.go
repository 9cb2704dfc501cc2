package impl

import "sync/atomic"

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

	// Redlock.
	NoQuorum        atomic.Int64 // attempts that got fewer than a majority
	ValidityExpired atomic.Int64 // attempts with a majority but no validity left
}

// Counts is a plain snapshot of Counters, summed over clients.
type Counts struct {
	RoundTrips      int64 `json:"round_trips"`
	Retries         int64 `json:"retries"`
	Notifications   int64 `json:"notifications"`
	Lost            int64 `json:"lost"`
	Wakeups         int64 `json:"wakeups"`
	ReleaseWakeups  int64 `json:"release_wakeups"`
	ArrivalWakeups  int64 `json:"arrival_wakeups"`
	WastedWakeups   int64 `json:"wasted_wakeups"`
	ChildrenRead    int64 `json:"children_read"`
	ZKOps           int64 `json:"zk_ops"`
	SessionLost     int64 `json:"session_lost"`
	NoQuorum        int64 `json:"no_quorum"`
	ValidityExpired int64 `json:"validity_expired"`
}

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
		NoQuorum:        c.NoQuorum.Load(),
		ValidityExpired: c.ValidityExpired.Load(),
	}
}

// Add returns the field-wise sum of a and b.
func (a Counts) Add(b Counts) Counts {
	return Counts{
		RoundTrips:      a.RoundTrips + b.RoundTrips,
		Retries:         a.Retries + b.Retries,
		Notifications:   a.Notifications + b.Notifications,
		Lost:            a.Lost + b.Lost,
		Wakeups:         a.Wakeups + b.Wakeups,
		ReleaseWakeups:  a.ReleaseWakeups + b.ReleaseWakeups,
		ArrivalWakeups:  a.ArrivalWakeups + b.ArrivalWakeups,
		WastedWakeups:   a.WastedWakeups + b.WastedWakeups,
		ChildrenRead:    a.ChildrenRead + b.ChildrenRead,
		ZKOps:           a.ZKOps + b.ZKOps,
		SessionLost:     a.SessionLost + b.SessionLost,
		NoQuorum:        a.NoQuorum + b.NoQuorum,
		ValidityExpired: a.ValidityExpired + b.ValidityExpired,
	}
}

// Sub returns the field-wise difference a − b.
func (a Counts) Sub(b Counts) Counts {
	return Counts{
		RoundTrips:      a.RoundTrips - b.RoundTrips,
		Retries:         a.Retries - b.Retries,
		Notifications:   a.Notifications - b.Notifications,
		Lost:            a.Lost - b.Lost,
		Wakeups:         a.Wakeups - b.Wakeups,
		ReleaseWakeups:  a.ReleaseWakeups - b.ReleaseWakeups,
		ArrivalWakeups:  a.ArrivalWakeups - b.ArrivalWakeups,
		WastedWakeups:   a.WastedWakeups - b.WastedWakeups,
		ChildrenRead:    a.ChildrenRead - b.ChildrenRead,
		ZKOps:           a.ZKOps - b.ZKOps,
		SessionLost:     a.SessionLost - b.SessionLost,
		NoQuorum:        a.NoQuorum - b.NoQuorum,
		ValidityExpired: a.ValidityExpired - b.ValidityExpired,
	}
}
