package lockbench_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	_ "github.com/lockbench/lockbench/impl/all"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/sandboxtest"
)

// allServers starts, for one test or benchmark, the servers of every
// registered role (or uses LOCKBENCH_<ROLE> addresses from the environment).
func allServers(tb testing.TB) impl.Servers {
	tb.Helper()
	return sandboxtest.Start(tb, impl.Roles()...)
}

// BenchmarkLock runs every registered implementation with exactly n
// clients, each on its own connection, sharing b.N acquisitions. ns/op is
// wall time per acquisition across all clients (1/throughput); the custom
// metrics come from the cell's own histograms and counters. scenario=hot
// puts every client on one lock; scenario=uncontended gives each its own.
func BenchmarkLock(b *testing.B) {
	hot, _ := lockbench.LookupScenario("hot")
	srv := allServers(b)
	for _, name := range impl.Names() {
		if strings.HasPrefix(name, "test-") {
			continue
		}
		d, _ := impl.Lookup(name) // its Short clock: a smoke, not a measurement
		for _, sc := range []string{"hot", "uncontended"} {
			for _, n := range []int{1, 4, 16} {
				b.Run(fmt.Sprintf("impl=%s/scenario=%s/clients=%d", name, sc, n), func(b *testing.B) {
					locks := 1
					if sc == "uncontended" {
						locks = n
					}
					cell, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
						Impl: name, Scenario: hot, Clients: n, Locks: locks, Acquires: int64(b.N),
						ServerKinds: sandbox.Meter{},
						Config:      impl.Config{Servers: srv, Namespace: fmt.Sprintf("bench-%s-%s-%d-%d", name, sc, n, b.N), Options: d.Short},
						OnClock:     clock(b),
					})
					if err != nil {
						b.Fatal(err)
					}
					checkCell(b, cell, int64(b.N))
					b.ReportMetric(cell.AcquiresPerS, "acquires/s")
					b.ReportMetric(cell.AcquireLatencyUs.P50*1e3, "p50-ns")
					b.ReportMetric(cell.AcquireLatencyUs.P99*1e3, "p99-ns")
					b.ReportMetric(cell.NotificationsPerAcquire, "notifications/op")
					b.ReportMetric(cell.RetriesPerAcquire, "retries/op")
					b.ReportMetric(cpuPerOp(cell, b.N)/1e3, "cpu-us/op")
				})
			}
		}
	}
}

// BenchmarkHarness is the harness's own cost per cycle: one client on the
// in-process lock, so no server is involved, with the history for the
// linearizability check recorded and not (run's --history=false): their
// difference is what the history costs a cycle while it records (a cell
// keeps engine.DefaultHistoryOps operations, so -benchtime 30000x
// records every cycle's two). -benchmem shows what the
// loop allocates (nothing, once the cell's histograms are amortised).
func BenchmarkHarness(b *testing.B) {
	hot, _ := lockbench.LookupScenario("hot")
	for _, h := range []struct {
		name string
		ops  int
	}{{"history=on", 0}, {"history=off", -1}} {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			cell, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
				Impl: "inproc", Scenario: hot, Clients: 1, Acquires: int64(b.N), HistoryOps: h.ops,
				ServerKinds: sandbox.Meter{},
				Config:      impl.Config{Namespace: fmt.Sprintf("harness-%s-%d", h.name, b.N)},
				OnClock:     clock(b),
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(cpuPerOp(cell, b.N), "cpu-ns/op")
			b.ReportMetric(cell.Generator.AllocsPerCycle, "cell-allocs/op")
		})
	}
}

// BenchmarkDriver is each driver's own acquire/release path with the
// harness left out: one client on its own connection, a lock no one else
// takes, Acquire then Release b.N times. allocs/op and B/op are the
// process's per cycle — the client library's connection goroutines
// included, the servers (other processes) not; cpu-ns/op is the process's
// CPU time per cycle, the kernel's share of the round trips included,
// which a shared machine moves less than ns/op. Beside BenchmarkLock's
// uncontended row, the difference is what the harness adds.
func BenchmarkDriver(b *testing.B) {
	srv := allServers(b)
	for _, name := range impl.Names() {
		if strings.HasPrefix(name, "test-") {
			continue
		}
		d, _ := impl.Lookup(name)
		b.Run("impl="+name, func(b *testing.B) { benchCycle(b, d, srv) })
	}
}

// benchCycle times b.N uncontended cycles of one client of d.
func benchCycle(b *testing.B, d impl.Driver, srv impl.Servers) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a cell's ctx has a deadline too
	defer cancel()
	cfg := impl.Config{Servers: srv, Clients: 1, Namespace: fmt.Sprintf("driver-%s-%d", d.Name, b.N), Options: d.Short}
	if d.Validate != nil {
		if err := d.Validate(cfg); err != nil {
			b.Fatal(err)
		}
	}
	l, err := d.New(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		l.Close()
		if d.Cleanup != nil {
			d.Cleanup(context.Background(), srv, cfg.Namespace)
		}
	}()
	const name = "lock-0"
	if p, ok := l.(impl.Preparer); ok {
		if err := p.Prepare(ctx, []string{name}); err != nil {
			b.Fatal(err)
		}
	}
	cycle := func() {
		lease, err := l.Acquire(ctx, name)
		if err != nil {
			b.Fatal(err)
		}
		if err := lease.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	cycle() // first use (a lock node, a loaded script) is set-up, as connecting is
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for range b.N {
		cycle()
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// checkCell fails the benchmark on a cell whose figures would mislead: a
// violation of mutual exclusion, an error, a cell cut short, or fewer
// acquisitions than it was asked for.
func checkCell(b *testing.B, cell result.Cell, want int64) {
	b.Helper()
	switch {
	case cell.SafetyViolations > 0:
		b.Fatalf("%d mutual-exclusion violations: %+v", cell.SafetyViolations, cell.Violations)
	case cell.Errors > 0:
		b.Fatalf("%d errors: %v", cell.Errors, cell.ErrorsByClass)
	case cell.Truncated != "":
		b.Fatalf("the cell was cut short: %s", cell.Truncated)
	case cell.Acquires < want:
		b.Fatalf("%d acquisitions, want %d", cell.Acquires, want)
	}
}

// reportKnown reports a figure that a machine may not be able to read (the
// servers' CPU, where their processes cannot be seen) as NaN there, so
// that every machine prints the same metrics and the gate reads the figure
// as unknown rather than missing by chance.
func reportKnown(b *testing.B, v *float64, unit string) {
	if v == nil {
		b.ReportMetric(math.NaN(), unit)
		return
	}
	b.ReportMetric(*v, unit)
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuPerOp is the CPU time, in ns, lockbench used over the cell per
// acquisition: on a machine shared with others it moves less than ns/op,
// which counts the time other processes held the cores.
func cpuPerOp(cell result.Cell, n int) float64 {
	if cell.Generator == nil || n == 0 {
		return 0
	}
	return cell.Generator.CPUSeconds * 1e9 / float64(n)
}

// clock runs b's timer only while the cell's clients run, so that
// connecting stays out of ns/op.
func clock(b *testing.B) func(running bool) {
	return func(running bool) {
		if running {
			b.ResetTimer()
		} else {
			b.StopTimer()
		}
	}
}

// clockAcross is clock for a cell run as repeats: the timer runs while any
// repeat's clients do, and connecting the next repeat is not timed.
func clockAcross(b *testing.B) func(running bool) {
	started := false
	return func(running bool) {
		switch {
		case running && !started:
			b.ResetTimer()
			started = true
		case running:
			b.StartTimer()
		default:
			b.StopTimer()
		}
	}
}

// BenchmarkHerd runs, for every implementation that wakes its waiters, a
// burst of 32 clients b.N times (each on connections of its own) and
// reports what a hand-off costs: release wake-ups, the servers' CPU time
// and lockbench's. ns/op is wall time per burst, connecting excluded;
// benchcheck can hold the per-hand-off figures to a limit.
func BenchmarkHerd(b *testing.B) {
	burst, _ := lockbench.LookupScenario("burst")
	srv := allServers(b)
	for _, name := range impl.Names() {
		d, _ := impl.Lookup(name)
		if d.Theory == nil || len(d.Needs) == 0 {
			continue
		}
		b.Run("impl="+name+"/clients=32", func(b *testing.B) {
			cell, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
				Impl: name, Scenario: burst, Clients: 32, Repeat: b.N, ConnectParallel: 32,
				ServerKinds: sandbox.Meter{},
				Config:      impl.Config{Servers: srv, Namespace: fmt.Sprintf("herd-%s-%d", name, b.N)},
				OnClock:     clockAcross(b),
			})
			if err != nil {
				b.Fatal(err)
			}
			checkCell(b, cell, int64(32*b.N))
			h, ok := result.HandoffCosts(cell)
			if !ok {
				b.Fatalf("no cost per hand-off: %+v", cell)
			}
			b.ReportMetric(h.Wakeups, "wakeups/handoff")
			reportKnown(b, h.ServerCPUUs, "server-cpu-us/handoff")
			reportKnown(b, h.GeneratorCPUUs, "cpu-us/handoff")
		})
	}
}

// TestBenchmarksFailBrokenCells: a benchmark's figures from a cell that
// broke mutual exclusion, erred, was cut short or made too few
// acquisitions are not reported: the benchmark fails.
func TestBenchmarksFailBrokenCells(t *testing.T) {
	good := result.Cell{Acquires: 10}
	for name, tc := range map[string]struct {
		cell result.Cell
		fail bool
	}{
		"good":       {good, false},
		"violation":  {result.Cell{Acquires: 10, SafetyViolations: 1}, true},
		"error":      {result.Cell{Acquires: 10, Errors: 1}, true},
		"cut short":  {result.Cell{Acquires: 10, Truncated: "max cell time"}, true},
		"too few":    {result.Cell{Acquires: 9}, true},
		"more is ok": {result.Cell{Acquires: 11}, false},
	} {
		r := testing.Benchmark(func(b *testing.B) { checkCell(b, tc.cell, 10) })
		if failed := r.N == 0; failed != tc.fail {
			t.Errorf("%s: failed=%v, want %v", name, failed, tc.fail)
		}
	}
}
