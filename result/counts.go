package result

// Counts are what the clients of a cell counted, summed over clients: a
// plain snapshot of the implementations' atomic counters. Fields an
// implementation has no use for stay zero.
type Counts struct {
	RoundTrips      int64 `json:"round_trips"`      // requests sent to a server
	Retries         int64 `json:"retries"`          // acquire attempts that did not get the lock
	Notifications   int64 `json:"notifications"`    // server-pushed events received
	Lost            int64 `json:"lost"`             // leases found expired or taken at release
	Wakeups         int64 `json:"wakeups"`          // notifications a waiting client acted on
	ReleaseWakeups  int64 `json:"release_wakeups"`  // ... whose re-read showed a node gone
	ArrivalWakeups  int64 `json:"arrival_wakeups"`  // ... whose re-read showed only new nodes
	WastedWakeups   int64 `json:"wasted_wakeups"`   // wake-ups after which the client still waits
	ChildrenRead    int64 `json:"children_read"`    // child names returned by getChildren
	ZKOps           int64 `json:"zk_ops"`           // ZooKeeper requests sent (pings excluded)
	SessionLost     int64 `json:"session_lost"`     // sessions that expired under a client
	FailedCreates   int64 `json:"failed_creates"`   // creates of a lock node refused because it exists
	NoQuorum        int64 `json:"no_quorum"`        // attempts that got fewer than a majority
	ValidityExpired int64 `json:"validity_expired"` // attempts with a majority but no validity left
	// SplitVotes are attempts that got some votes but not a majority.
	SplitVotes int64 `json:"split_votes,omitempty"`
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
		FailedCreates:   a.FailedCreates + b.FailedCreates,
		NoQuorum:        a.NoQuorum + b.NoQuorum,
		ValidityExpired: a.ValidityExpired + b.ValidityExpired,
		SplitVotes:      a.SplitVotes + b.SplitVotes,
	}
}

// Sub returns the field-wise difference a − b.
func (a Counts) Sub(b Counts) Counts {
	return a.Add(b.neg())
}

func (a Counts) neg() Counts {
	return Counts{
		RoundTrips: -a.RoundTrips, Retries: -a.Retries, Notifications: -a.Notifications, Lost: -a.Lost,
		Wakeups: -a.Wakeups, ReleaseWakeups: -a.ReleaseWakeups, ArrivalWakeups: -a.ArrivalWakeups,
		WastedWakeups: -a.WastedWakeups, ChildrenRead: -a.ChildrenRead, ZKOps: -a.ZKOps,
		SessionLost: -a.SessionLost, FailedCreates: -a.FailedCreates, NoQuorum: -a.NoQuorum, ValidityExpired: -a.ValidityExpired,
		SplitVotes: -a.SplitVotes,
	}
}
