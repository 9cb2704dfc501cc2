package redispubsub_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	_ "github.com/lockbench/lockbench/faults" // the crash scenario
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/sandboxtest"
	_ "github.com/lockbench/lockbench/scenarios" // the load scenarios
)

// TestMeasure measures the driver beside the single-instance polling lock
// on one server: a burst of 64, uncontended and contended throughput, and
// recovery from a crashed holder. It reports figures, asserts none, and
// runs only with LOCKBENCH_MEASURE=1 (go test -run Measure -v).
func TestMeasure(t *testing.T) {
	if os.Getenv("LOCKBENCH_MEASURE") != "1" {
		t.Skip("set LOCKBENCH_MEASURE=1 to measure")
	}
	servers := sandboxtest.Start(t, redis.Need)
	m := &measure{t: t, servers: servers}
	m.burst()
	m.hot(false)
	m.hot(true)
	m.crash()
}

type measure struct {
	t       *testing.T
	servers impl.Servers
	seq     int
}

func (m *measure) run(spec engine.CellSpec) result.Cell {
	m.t.Helper()
	m.seq++
	spec.Config.Servers = m.servers
	spec.Config.Namespace = fmt.Sprintf("measure-%d-%d", time.Now().UnixNano(), m.seq)
	res, err := engine.RunCellDetail(context.Background(), spec)
	if err != nil {
		m.t.Fatalf("%s %s ×%d: %v", spec.Impl, spec.Scenario.Name(), spec.Clients, err)
	}
	return res.Cell
}

func (m *measure) burst() {
	burst, _ := engine.LookupScenario("burst")
	addr := m.servers[redis.Need.Role][0]
	for range 3 {
		before := publishCalls(m.t, addr)
		c := m.run(engine.CellSpec{Impl: name, Scenario: burst, Clients: 64, Locks: 1, ConnectParallel: 32})
		m.t.Logf("burst 64: release wake-ups %d (theory %d), wasted %d, notifications %d, publish_receivers %v, publishes %v, server cmdstat_publish +%d, pttl_waits %v, settle %s; %.0f ms, acquire p50 %.0f µs p99 %.0f µs, %.1f round trips/acquire",
			c.ReleaseWakeups, *c.TheoryWakeups, c.WastedWakeups, c.Notifications, c.Vectors["publish_receivers"], c.Vectors["publishes"],
			publishCalls(m.t, addr)-before, c.Vectors["pttl_waits"], c.Settle, c.DurationS*1e3,
			c.AcquireLatencyUs.P50, c.AcquireLatencyUs.P99, c.RoundTripsPerAcquire)
	}
}

// hot runs the closed loop with a lock per client (uncontended) or one
// lock for all (contended), the two drivers alternating, three rounds
// each; it reports each round and the median round by throughput.
func (m *measure) hot(contended bool) {
	hot, _ := engine.LookupScenario("hot")
	for _, clients := range []int{1, 4, 16} {
		locks := clients
		if contended {
			if clients == 1 {
				continue
			}
			locks = 1
		}
		cells := map[string][]result.Cell{}
		for range 3 {
			for _, driver := range []string{name, "redis"} {
				c := m.run(engine.CellSpec{Impl: driver, Scenario: hot, Clients: clients, Locks: locks,
					Acquires: 2000, Warmup: 200 * time.Millisecond})
				cells[driver] = append(cells[driver], c)
			}
		}
		for _, driver := range []string{name, "redis"} {
			cs := cells[driver]
			for i, c := range cs {
				m.t.Logf("  round %d: %s", i, line(c))
			}
			slices.SortFunc(cs, func(a, b result.Cell) int { return cmp.Compare(a.AcquiresPerS, b.AcquiresPerS) })
			m.t.Logf("median: %s", line(cs[1]))
		}
	}
}

func line(c result.Cell) string {
	jain := 0.0
	if c.Fairness != nil {
		jain = c.Fairness.Jain
	}
	return fmt.Sprintf("hot clients=%d locks=%d %-12s %6.0f acq/s  p50 %5.0f µs  p99 %6.0f µs  %5.2f rt/acq  %5.2f retries/acq  %5.2f notif/acq  jain %.2f  violations %d",
		c.Clients, c.Locks, c.Impl, c.AcquiresPerS, c.AcquireLatencyUs.P50, c.AcquireLatencyUs.P99,
		c.RoundTripsPerAcquire, c.RetriesPerAcquire, c.NotificationsPerAcquire, jain, c.SafetyViolations)
}

func (m *measure) crash() {
	crash, _ := engine.LookupScenario("crash")
	for _, driver := range []string{name, "redis"} {
		c := m.run(engine.CellSpec{Impl: driver, Scenario: crash, Clients: 2, Repeat: 3,
			ServerKinds: sandbox.Meter{},
			Config:      impl.Config{TTL: 2 * time.Second}})
		if c.Faults == nil || c.Faults.RecoveryMs == nil {
			m.t.Errorf("crash %s: no recovery figure: %s", driver, report.FaultSentence(c))
			continue
		}
		r := c.Faults.RecoveryMs
		m.t.Logf("crash ttl=2s ×3 %-12s recovery p50 %.0f ms (min %.0f, max %.0f); %s",
			driver, r.P50, r.Min, r.Max, report.FaultSentence(c))
	}
}
