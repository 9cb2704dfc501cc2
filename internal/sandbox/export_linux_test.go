package sandbox

import "time"

// TicksCPU is CPUTime read in /proc/PID/stat's 10 ms ticks (the server's
// own process and those it forked), for tests that hold the two readings
// side by side.
func TicksCPU(addr string) (time.Duration, bool) {
	v, ok := running.Load(addr)
	if !ok {
		return 0, false
	}
	s := v.(*Server)
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		return 0, false
	}
	tree, ok := processTree(cmd.Process.Pid)
	var total time.Duration
	for _, p := range tree {
		total += ticksToDuration(p.own + p.reaped)
	}
	return total, ok
}
