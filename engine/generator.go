package engine

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
)

// health watches lockbench itself while a cell runs: CPU time, garbage
// collection and goroutines.
type health struct {
	start   time.Time
	cpu0    time.Duration
	gc0     debug.GCStats
	maxG    atomic.Int64
	stopc   chan struct{}
	done    chan struct{}
	wall    time.Duration
	cpu     time.Duration
	gcPause time.Duration
	gcCount int64
	// The machine as a whole: its CPU time at the start and over the
	// cell (machineOK when both were read), and the wake probe's figures.
	machine0, machine time.Duration
	machineOK         bool
	probe             *wakeProbe
	wakeLate          *result.Latency
	// allocs0 is the heap's allocations (objects, bytes) when the
	// measurement began: at the start, or set again when a warm-up ends
	// (measureFrom); allocs is what was allocated since, at stop.
	allocs0 atomic.Pointer[[2]uint64]
	allocs  [2]uint64
}

// heapAllocs is the process's allocations so far: objects and bytes.
func heapAllocs() [2]uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	var out [2]uint64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			out[i] = s[i].Value.Uint64()
		}
	}
	return out
}

// measureFrom starts the count of allocations again: the warm-up ended.
func (h *health) measureFrom() {
	a := heapAllocs()
	h.allocs0.Store(&a)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startHealth() *health {
	h := &health{start: time.Now(), cpu0: cpuTime(), stopc: make(chan struct{}), done: make(chan struct{})}
	h.measureFrom()
	h.machine0, h.machineOK = MachineCPU()
	h.probe = startWakeProbe()
	debug.ReadGCStats(&h.gc0)
	go func() {
		defer close(h.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if g := int64(runtime.NumGoroutine()); g > h.maxG.Load() {
				h.maxG.Store(g)
			}
			select {
			case <-h.stopc:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *health) stop() *health {
	close(h.stopc)
	<-h.done
	h.wall = time.Since(h.start)
	h.cpu = cpuTime() - h.cpu0
	m, ok := MachineCPU()
	h.machine, h.machineOK = m-h.machine0, ok && h.machineOK
	// The probe's CPU is lockbench's, spent in a process of its own.
	var probeCPU time.Duration
	h.wakeLate, probeCPU = h.probe.finish()
	h.cpu += probeCPU
	var gc debug.GCStats
	debug.ReadGCStats(&gc)
	h.gcPause = gc.PauseTotal - h.gc0.PauseTotal
	h.gcCount = gc.NumGC - h.gc0.NumGC
	a, a0 := heapAllocs(), h.allocs0.Load()
	h.allocs = [2]uint64{a[0] - a0[0], a[1] - a0[1]}
	return h
}

// report turns what was watched into the cell's Generator, with a warning
// when lockbench, not the lock, may have been the bottleneck; serverCPU is what the sandboxed servers used over
// serverSpan seconds.
func (h *health) report(c result.Cell, serverCPU map[string]float64, serverSpan float64) *result.Generator {
	g := &result.Generator{
		GCPauseMs: float64(h.gcPause) / 1e6, GCCount: h.gcCount, Goroutines: int(h.maxG.Load()),
		CPUSeconds: h.cpu.Seconds(), Cores: runtime.NumCPU(), Procs: runtime.GOMAXPROCS(0),
		ServerCPUSeconds: serverCPU, ServerSpanS: serverSpan, WakeLateUs: h.wakeLate,
		Allocs: int64(h.allocs[0]), AllocBytes: int64(h.allocs[1]),
	}
	g.PerCycle(c.Acquires)
	g.OtherCores = h.otherCores(serverCPU, serverSpan)
	if h.wall > 0 {
		g.CPUShare = h.cpu.Seconds() / (h.wall.Seconds() * float64(runtime.NumCPU()))
	}
	var warn []string
	if judge.GeneratorBusy(g) {
		warn = append(warn, fmt.Sprintf("lockbench used %.0f%% of all CPUs", 100*g.CPUShare))
	}
	if h.wall > 0 && h.gcPause > h.wall/100 {
		warn = append(warn, fmt.Sprintf("GC paused lockbench %.1f%% of the time", 100*float64(h.gcPause)/float64(h.wall)))
	}
	// Lateness is judged by judge's one rule, which a capacity trial asks
	// too.
	if judge.Late(c, nil) {
		lag := c.Open.ScheduleLagUs.P99
		warn = append(warn, fmt.Sprintf("arrivals fired up to %s late (p99), against a lock p99 of %s",
			result.Dur(lag), result.Dur(c.AcquireLatencyUs.P99)))
	}
	g.Warning = strings.Join(warn, "; ")
	return g
}

// otherCores is how many cores, on average over the cell, processes other
// than lockbench and its servers kept busy: -1 when the machine's CPU
// time cannot be read. A server on this machine that lockbench did not
// start is one of its servers (sandbox.Serving finds it by its socket),
// not other work; one whose processes cannot be seen (another
// container's) still counts as other work here.
// minBusyWall is the shortest cell whose machine load is read: over it,
// /proc/stat's ticks are good to a tenth of a core.
const minBusyWall = 250 * time.Millisecond

func (h *health) otherCores(serverCPU map[string]float64, serverSpan float64) float64 {
	// /proc/stat counts in hundredths of a second a core: over a burst of a
	// few milliseconds that reads as several cores busy, or none. A cell
	// shorter than minBusyWall leaves it unknown.
	if !h.machineOK || h.wall < minBusyWall {
		return -1
	}
	ours := h.cpu.Seconds()
	for _, v := range serverCPU {
		if serverSpan > 0 { // over the cell's span, not the servers' own
			ours += v * h.wall.Seconds() / serverSpan
		}
	}
	// Good to a few hundredths of a second either way, never below zero.
	return max(h.machine.Seconds()-ours, 0) / h.wall.Seconds()
}
