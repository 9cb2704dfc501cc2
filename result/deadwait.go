package result

// DeadWaiterFigures are the deadwait scenario's: Dead waiters died while
// queued behind a holder (their connections ended with no clean-up, as
// when a process is killed); the holder then released, and the stall is
// the time until a live waiter queued behind them held the lock. BoundMs
// is how long the lock's own rules let a dead waiter hold up the queue
// (impl.Driver.DeadWaiterBound): 0 where nothing of a waiter outlives it.
type DeadWaiterFigures struct {
	Dead         int     `json:"dead"`
	BoundMs      float64 `json:"bound_ms"`
	BoundSetting string  `json:"bound_setting,omitempty"`
	// Reset is the stall when the dead waiters' connections were reset
	// (the process died, its kernel answered with RST); Silent, for a
	// lock of the connection's, when they fell silent (the host dropped
	// off the network), which only the server's keepalive notices.
	Reset  DeadEnd  `json:"reset"`
	Silent *DeadEnd `json:"silent,omitempty"`
}

// DeadEnd is the stall over the repeats for one way of dying: how long
// the live waiter waited after the release, and how often it was not
// granted within WaitMs at all.
type DeadEnd struct {
	StallMs *Spread `json:"stall_ms,omitempty"`
	Unfreed int64   `json:"unfreed,omitempty"`
	WaitMs  float64 `json:"wait_ms"`
}

// PerDeadMs is the median stall per dead waiter, in ms; 0 without one.
func (e DeadEnd) PerDeadMs(dead int) float64 {
	if e.StallMs == nil || dead <= 0 {
		return 0
	}
	return e.StallMs.P50 / float64(dead)
}
