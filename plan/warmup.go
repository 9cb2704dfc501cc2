package plan

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// DefaultServerWarmup bounds a server kind's warm-up: a JVM's compiler
// (ZooKeeper's) needs tens of seconds of load before its rate settles.
const DefaultServerWarmup = 30 * time.Second

// Warm-up's steady-state test, in the manner of JMH's: the rate of each
// second is taken, and the server is warm once the mean of the last
// steadyWindow seconds is within steadyDrift of the mean of the window
// before it (no trend left) and those seconds lie within steadySpread of
// their mean (no single second carries the verdict). Windows of five
// seconds: a JVM's compiler warms in steps, and three-second windows took
// ZooKeeper's first plateau, 250/s at 8 s, for its rate, which went on to
// 650/s by 20 s.
const (
	steadyWindow = 5
	steadyDrift  = 0.05
	steadySpread = 0.30
	// warmupClients is the most clients a warm-up runs: enough to keep a
	// server's every thread busy, few enough to connect at once.
	warmupClients = 32
)

// warmServers warms, before the first measured cell, every kind of
// server the plan's drivers use, in the production profile: a JVM
// compiles its hot paths, a database fills its caches, and the first
// cell on a fresh server would otherwise measure that. Each kind gets a
// hot closed loop through the first driver that needs it, until its rate
// is steady (steady) or p.ServerWarmup has passed.
//
// Only the servers the run's own sandbox started are warmed: a server the
// user named is theirs, in whatever state they keep it, and a capacity
// search, whose trials are plans over servers it started once, must not
// warm them again at every trial.
func warmServers(ctx context.Context, p Plan, runID string, sandboxed []string) []result.ServerWarmup {
	if p.Profile == sandbox.ProfileFast || p.ServerWarmup <= 0 {
		return nil
	}
	hot, ok := engine.LookupScenario("hot")
	if !ok {
		return nil
	}
	var out []result.ServerWarmup
	warmed := map[string]bool{}
	for _, d := range p.drivers {
		var kinds []string
		for _, n := range d.Needs {
			if !warmed[n.Kind] && slices.Contains(sandboxed, n.Role) && len(p.Cell.Config.Servers[n.Role]) > 0 {
				kinds = append(kinds, n.Kind)
			}
		}
		if len(kinds) == 0 {
			continue
		}
		for _, k := range kinds {
			warmed[k] = true
		}
		spec := engine.CellSpec{Impl: d.Name, Driver: d, Scenario: hot, Locks: 1,
			Clients: min(max(slices.Max(p.Clients), 1), warmupClients), Duration: p.ServerWarmup,
			MaxTime: p.ServerWarmup + time.Minute, ConnectParallel: p.Cell.ConnectParallel, Config: p.Cell.Config}
		spec.Config.Namespace = fmt.Sprintf("%s-warmup-%s", runID, d.Name)
		w := warmOne(ctx, spec)
		for _, k := range kinds {
			w.Kind = k
			out = append(out, w)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return out
}

// warmOne runs spec's closed loop until its rate is steady or its
// duration ends.
func warmOne(ctx context.Context, spec engine.CellSpec) result.ServerWarmup {
	w := result.ServerWarmup{Impl: spec.Impl, Clients: spec.Clients, BoundS: spec.Duration.Seconds()}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var mu sync.Mutex
	spec.OnInterval = func(_ result.Cell, _ time.Time, iv hlog.Interval) {
		length := iv.End.Sub(iv.Start)
		if iv.End.IsZero() {
			length = hlog.IntervalLength
		}
		if length < hlog.IntervalLength/2 {
			return // the stub at the cell's end
		}
		mu.Lock()
		defer mu.Unlock()
		w.RatesPerS = append(w.RatesPerS, float64(iv.Acquire.TotalCount())/length.Seconds())
		if steady(w.RatesPerS) {
			w.Steady = true
			stop()
		}
	}
	start := time.Now()
	_, err := engine.RunCellDetail(wctx, spec)
	mu.Lock()
	defer mu.Unlock()
	w.Seconds = time.Since(start).Seconds()
	if err != nil && !w.Steady && ctx.Err() == nil {
		w.Error = err.Error()
	}
	if w.Steady && spec.Driver.Cleanup != nil {
		// The loop was stopped, so the cell cleaned nothing up.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		spec.Driver.Cleanup(cctx, spec.Config.Servers, spec.Config.Namespace)
		cancel()
	}
	return w
}

// steady is the warm-up's steady-state test over per-second rates.
func steady(rates []float64) bool {
	if len(rates) < 2*steadyWindow {
		return false
	}
	last := rates[len(rates)-steadyWindow:]
	prev := rates[len(rates)-2*steadyWindow : len(rates)-steadyWindow]
	mean := func(xs []float64) float64 {
		var s float64
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	m, pm := mean(last), mean(prev)
	if m <= 0 || pm <= 0 {
		return false
	}
	drift := m/pm - 1
	spread := (slices.Max(last) - slices.Min(last)) / m
	return drift <= steadyDrift && drift >= -steadyDrift && spread <= steadySpread
}
