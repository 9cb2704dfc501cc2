package sandbox

import "time"

// TicksCPU is CPUTime read in /proc/PID/stat's 10 ms ticks (the server's
// own process and those it forked), for tests that hold the two readings
// side by side.
func TicksCPU(addr string) (time.Duration, bool) {
	pid, ok := pidOf(addr)
	if !ok {
		return 0, false
	}
	tree, ok := processTree(pid)
	var total time.Duration
	for _, p := range tree {
		total += ticksToDuration(p.own + p.reaped)
	}
	return total, ok
}
