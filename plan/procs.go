package plan

import (
	"fmt"
	"os"
	"runtime"
)

// sharedProcs is how many cores lockbench's Go code may use when servers
// it started share the machine: the cores less one for each sandboxed
// server process, keeping at least half the machine for lockbench and at
// least one core for them together. On 2 cores with its servers beside
// it, lockbench runs on 1: with Go's default of 2 its threads took the
// core Redis needed, and it reached 0.85–0.91 of redis-benchmark's rate
// where on 1 it reaches 0.92–1.31.
func sharedProcs(cpus, servers int) int {
	if servers <= 0 || cpus <= 1 {
		return cpus
	}
	reserve := min(max(servers, 1), cpus/2)
	return max(1, cpus-reserve)
}

// chooseProcs is the GOMAXPROCS for a run with servers processes on this
// machine (its sandbox's, or given on loopback), and why; 0 and "" when the user set
// GOMAXPROCS or Go's choice stands. Open-loop cells keep Go's choice: on
// one P a write that blocks (the interval log's, each second) would hold
// up every arrival, and the schedule lag would measure that.
func chooseProcs(servers int) (int, string) {
	if os.Getenv("GOMAXPROCS") != "" || servers == 0 {
		return 0, ""
	}
	// Go's own choice already heeds a CPU quota: never go above it.
	cpus := min(runtime.NumCPU(), runtime.GOMAXPROCS(0))
	n := sharedProcs(cpus, servers)
	if n >= runtime.GOMAXPROCS(0) {
		return 0, ""
	}
	return n, fmt.Sprintf("lockbench chose GOMAXPROCS=%d of %d cores: %d of its servers share this machine (open-loop cells keep Go's %d; set GOMAXPROCS to choose yourself)",
		n, cpus, servers, runtime.GOMAXPROCS(0))
}
