package result

// WaitFigures are what the wait scenario's shape measured: how many
// clients waited, and for how long, while one held the lock.
type WaitFigures struct {
	Waiters int     `json:"waiters"`
	WaitS   float64 `json:"wait_s"`
	// Granted is how many waiters were granted the lock during the wait:
	// none, unless the holder lost it (a lease that ended under it).
	Granted int64 `json:"granted,omitempty"`
}

// WaitCost is what one waiting client costs per second of waiting: its
// machine (lockbench's CPU, in µs per second), the servers (their CPU
// above their rate at rest, µs per second; nil where their processes were
// not seen) and the wire (requests sent and notifications received per
// second). A waiter that watches should cost almost nothing; a poller
// costs its retry rate; a spinning client shows.
type WaitCost struct {
	Waiters           int      `json:"waiters"`
	LockbenchCPUUs    float64  `json:"lockbench_cpu_us_per_waiter_s"`
	ServerCPUUs       *float64 `json:"server_cpu_us_per_waiter_s,omitempty"`
	Requests          float64  `json:"requests_per_waiter_s"`
	Notifications     float64  `json:"notifications_per_waiter_s"`
	RetriesPerWaiterS float64  `json:"retries_per_waiter_s"`
}

// WaitCostOf derives a wait cell's cost per waiter-second; false for any
// other cell. Every figure counts the whole cell — the holder's one
// acquisition and the waiters' first requests too — over the waiters'
// time, which a wait of seconds makes small beside it.
func WaitCostOf(c Cell) (WaitCost, bool) {
	w := c.Wait
	if w == nil || w.Waiters == 0 || w.WaitS <= 0 {
		return WaitCost{}, false
	}
	ws := float64(w.Waiters) * w.WaitS
	out := WaitCost{Waiters: w.Waiters, Requests: float64(c.RoundTrips) / ws,
		Notifications: float64(c.Notifications) / ws, RetriesPerWaiterS: float64(c.Retries) / ws}
	if g := c.Generator; g != nil {
		out.LockbenchCPUUs = g.CPUSeconds * 1e6 / ws
		if len(g.ServerCPUSeconds) > 0 && g.ServerIdleCores != nil && g.ServerSpanS > 0 {
			var s float64
			for _, v := range g.ServerCPUSeconds {
				s += v
			}
			above := max(s-*g.ServerIdleCores*g.ServerSpanS, 0) * 1e6 / ws
			out.ServerCPUUs = &above
		}
	}
	return out, true
}
