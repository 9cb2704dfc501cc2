package redisfair_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/engine"
	_ "github.com/lockbench/lockbench/faults" // registers the crash scenario
	"github.com/lockbench/lockbench/impl"
	_ "github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
)

// measured are the implementations measured side by side, on one server.
var measured = []string{"redis-fair", "redis"}

// TestMeasure prints the fair lock's figures beside the single-Redis
// polling lock's, on one server: a burst of 64, closed loops at 1, 4 and
// 16 clients (uncontended: a lock each; contended: one lock), and
// recovery from a crashed holder. It measures rather than checks, so it
// runs only with LOCKBENCH_MEASURE=1.
func TestMeasure(t *testing.T) {
	if os.Getenv("LOCKBENCH_MEASURE") != "1" {
		t.Skip("set LOCKBENCH_MEASURE=1 to measure")
	}
	s := server(t)
	adm := admin(t, s)
	measureBurst(t, s, adm)
	for _, contended := range []bool{false, true} {
		for _, n := range []int{1, 4, 16} {
			measureHot(t, s, adm, n, contended)
		}
	}
	measureCrash(t, s)
}

func measureBurst(t *testing.T, s impl.Servers, adm *goredis.Client) {
	burst, _ := engine.LookupScenario("burst")
	for _, name := range measured {
		before := publishes(t, adm)
		c := measureCell(t, engine.CellSpec{Impl: name, Scenario: burst, Clients: 64, Locks: 1, ConnectParallel: 32,
			Config: impl.Config{Servers: s, Namespace: namespace(t)}})
		pub := publishes(t, adm) - before
		t.Logf("burst 64 %-10s: notifications %d, wake-ups %d (release %d, wasted %d), retries %d, round trips %d, server PUBLISH %d, Jain %.4f, settle %s, acquire p50 %.0f µs p99 %.0f µs",
			name, c.Notifications, c.Wakeups, c.ReleaseWakeups, c.WastedWakeups, c.Retries, c.RoundTrips, pub,
			c.Fairness.Jain, c.Settle, c.AcquireLatencyUs.P50, c.AcquireLatencyUs.P99)
	}
}

// measureHot runs each implementation three times, interleaved, and
// prints every run's throughput and the median run's figures, since the
// machine may be shared; then one run without warm-up for what the
// server spent per acquisition.
func measureHot(t *testing.T, s impl.Servers, adm *goredis.Client, n int, contended bool) {
	const rounds = 3
	hot, _ := engine.LookupScenario("hot")
	locks := n
	if contended {
		locks = 1
	}
	spec := func(name string, warmup time.Duration) engine.CellSpec {
		return engine.CellSpec{Impl: name, Scenario: hot, Clients: n, Locks: locks, Acquires: 2000,
			Warmup: warmup, Config: impl.Config{Servers: s, Namespace: namespace(t)}}
	}
	runs := map[string][]result.Cell{}
	for r := range rounds {
		order := slices.Clone(measured)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, name := range order {
			runs[name] = append(runs[name], measureCell(t, spec(name, 300*time.Millisecond)))
		}
	}
	for _, name := range measured {
		cpu, cmds := serverCPU(t, adm), commandStats(t, adm)
		c := measureCell(t, spec(name, 0))
		cpuUs := (serverCPU(t, adm) - cpu) * 1e6 / float64(c.Acquires)
		cmdUs := float64(topLevelUsec(commandStats(t, adm))-topLevelUsec(cmds)) / float64(c.Acquires)

		rs := runs[name]
		slices.SortFunc(rs, func(a, b result.Cell) int { return int(a.AcquiresPerS - b.AcquiresPerS) })
		m := rs[len(rs)/2]
		var each []int
		for _, r := range rs {
			each = append(each, int(r.AcquiresPerS))
		}
		t.Logf("hot locks=%-2d clients=%-2d %-10s: median %6.0f acq/s %v, acquire p50 %5.0f µs p99 %6.0f µs, release p99 %5.0f µs, round trips/acq %.2f, retries/acq %.2f, notif/acq %.2f, Jain %.3f; server per acq: CPU %.1f µs, in commands %.1f µs",
			locks, n, name, m.AcquiresPerS, each, m.AcquireLatencyUs.P50, m.AcquireLatencyUs.P99, m.ReleaseLatencyUs.P99,
			m.RoundTripsPerAcquire, m.RetriesPerAcquire, m.NotificationsPerAcquire, m.Fairness.Jain, cpuUs, cmdUs)
	}
}

// topLevelUsec sums the time of the commands clients send (not those
// scripts run, whose time is their script's).
func topLevelUsec(st map[string]cmdStat) int64 {
	var n int64
	for _, c := range []string{"evalsha", "eval", "set", "subscribe", "unsubscribe", "ping"} {
		n += st[c].usec
	}
	return n
}

func measureCrash(t *testing.T, s impl.Servers) {
	crash, _ := engine.LookupScenario("crash")
	for _, name := range measured {
		c := measureCell(t, engine.CellSpec{Impl: name, Scenario: crash, Clients: 2, Repeat: 3, MaxTime: 2 * time.Minute,
			Config: impl.Config{Servers: s, Namespace: namespace(t), TTL: 2 * time.Second}})
		r := c.Faults.RecoveryMs
		if r == nil {
			t.Errorf("crash %s: no recovery: %s", name, report.FaultSentence(c))
			continue
		}
		t.Logf("crash TTL 2s %-10s: recovery p50 %.0f ms (min %.0f, max %.0f, %d repeats); %s", name, r.P50, r.Min, r.Max, r.Count, report.FaultSentence(c))
	}
}

func measureCell(t *testing.T, spec engine.CellSpec) result.Cell {
	t.Helper()
	spec.ServerKinds = sandbox.Meter{}
	c, err := engine.RunCell(context.Background(), spec)
	if err != nil {
		t.Fatalf("%s %s %d: %v", spec.Impl, spec.Scenario.Name(), spec.Clients, err)
	}
	if c.SafetyViolations != 0 || c.Errors != 0 {
		t.Errorf("%s %s clients=%d: %d violations, errors %v", spec.Impl, spec.Scenario.Name(), spec.Clients, c.SafetyViolations, c.ErrorsByClass)
	}
	return c
}
