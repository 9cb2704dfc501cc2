package sandbox

import (
	"fmt"
	"time"
)

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

// descendants lists the processes below pid.
func descendants(pid int) []int {
	tree, _ := processTree(pid)
	var out []int
	for _, p := range tree {
		if p.pid != pid {
			out = append(out, p.pid)
		}
	}
	return out
}

// statCPU is a process's own CPU time in /proc/PID/stat's ticks.
func statCPU(pid int) (time.Duration, bool) {
	p, ok := readStat(fmt.Sprintf("/proc/%d/stat", pid))
	return ticksToDuration(p.own), ok
}
