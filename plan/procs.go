package plan

import (
	"fmt"
	"os"
	"runtime"

	"github.com/lockbench/lockbench/engine"
)

// sharedProcs is how many cores lockbench's Go code may use when servers
// it started share the machine: the cores less one for each sandboxed
// server process, keeping at least half the machine for lockbench and at
// least one core for them together.
func sharedProcs(cpus, servers int) int {
	if servers <= 0 || cpus <= 1 {
		return cpus
	}
	reserve := min(max(servers, 1), cpus/2)
	return max(1, cpus-reserve)
}

// procsTrial is what a run with servers processes on this machine (its
// sandbox's, or given on loopback) tries for its GOMAXPROCS, and why: Go's
// own choice first, then the cores left when each server keeps one (up
// to half the machine). Each closed-loop cell with a warm-up tries both
// while it warms up and keeps the one that cycles faster
// (engine.ProcsTrial): on one 2-core machine leaving Redis its core was
// faster, on another Go's default was, and which one depended on the
// clients too. Nil and "" when the user set GOMAXPROCS, no server is
// local, or the two are the same.
func procsTrial(servers int) ([]int, string) {
	if os.Getenv("GOMAXPROCS") != "" || servers == 0 {
		return nil, ""
	}
	// Go's own choice already heeds a CPU quota: never go above it.
	goes := runtime.GOMAXPROCS(0)
	cpus := min(runtime.NumCPU(), goes)
	n := sharedProcs(cpus, servers)
	if n >= goes {
		return nil, ""
	}
	return []int{goes, n}, fmt.Sprintf("lockbench shares %d cores with %d of its servers: each closed-loop cell with a warm-up of %v or more tries GOMAXPROCS %d (Go's) and %d (leaving the servers %s) in turns as it warms up, and measures under %d only if it was %.0f %% faster in every round, or as fast for %.0f %% less of lockbench's CPU a grant, and each saw %d grants; other closed-loop cells, bursts, ramps and shards keep Go's %d; set GOMAXPROCS to choose yourself",
		cpus, servers, engine.MinTrialWarmup, goes, n, cores(cpus-n), n, 100*engine.TrialMargin, 100*engine.TrialCPUMargin, engine.TrialMinGrants, goes)
}

// openProcs is the GOMAXPROCS an open-loop cell runs under when servers
// on this machine share it, and why; 0 and "" when the user set
// GOMAXPROCS or no server is local. An open loop's client waits on its
// timer until its arrival's time; the timer's wake reaches it through
// Go's netpoller, which a thread looks at when it has nothing else to run.
// With Go's one P per core, and the cores shared with the servers, both
// of lockbench's threads are busy: the wake waits until one of them looks,
// and that thread itself waits in the kernel's run queue behind the
// servers. With twice as many Ps, one is usually idle, its thread blocks
// in the netpoller and the kernel wakes it at the timer's time, as it
// wakes any thread that sleeps. Measured at 32 polling clients against
// Redis at 500 arrivals/s for 60 s on 2 cores (scripts/open-loop-lag,
// six interleaved runs each): the schedule lag's p99 read 0.78–1.35× the
// machine's own sleeper's under GOMAXPROCS 4 against 1.40–2.35× under
// Go's 2, for less of lockbench's CPU (17.6–18.4 s against 19.4–20.6 s);
// 3 read 1.58–1.76×, and 8 read 0.66–1.82×. On a noisier afternoon, the
// machine's own sleeper at 249–683 µs, nine runs under 4 read 0.65–1.94×
// (median 1.54) against five under 2 at 1.38–2.14× (median 1.75): the
// rule moves the lag towards the sleeper's, and holds it there only on a
// quiet machine.
func openProcs(servers int) (int, string) {
	if os.Getenv("GOMAXPROCS") != "" || servers == 0 {
		return 0, ""
	}
	goes := runtime.GOMAXPROCS(0)
	n := 2 * goes
	return n, fmt.Sprintf("each open-loop cell runs under GOMAXPROCS %d, twice Go's %d, so that a P is free to take its clients' timers as they fire while its servers keep the cores busy", n, goes)
}

// cores is "1 core", "2 cores".
func cores(n int) string {
	if n == 1 {
		return "1 core"
	}
	return fmt.Sprintf("%d cores", n)
}
