package etcdmutex_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/lockbench/lockbench/engine"
	_ "github.com/lockbench/lockbench/faults" // the crash scenario
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/etcdmutex"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
)

// TestMeasure measures the driver on one sandboxed etcd: a burst of 64,
// uncontended throughput at 1, 4 and 16 clients, two clients contending
// beside concurrency.Mutex, and recovery from a crashed holder. It reports figures, asserts only that cells ran, and
// runs only with LOCKBENCH_MEASURE=1 (go test -run Measure -v).
func TestMeasure(t *testing.T) {
	if os.Getenv("LOCKBENCH_MEASURE") != "1" {
		t.Skip("set LOCKBENCH_MEASURE=1 to measure")
	}
	m := &measure{t: t, servers: servers(t)}
	m.burst()
	m.hot()
	m.contended()
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
	spec.Impl = "etcd-recipe"
	spec.Config.Servers = m.servers
	spec.ServerKinds = sandbox.Meter{}
	spec.Config.Namespace = fmt.Sprintf("measure-%d-%d", time.Now().UnixNano(), m.seq)
	res, err := engine.RunCellDetail(context.Background(), spec)
	if err != nil {
		m.t.Fatalf("%s ×%d: %v", spec.Scenario.Name(), spec.Clients, err)
	}
	return res.Cell
}

func (m *measure) burst() {
	burst, _ := engine.LookupScenario("burst")
	for range 3 {
		c := m.run(engine.CellSpec{Scenario: burst, Clients: 64, Locks: 1, ConnectParallel: 32})
		m.t.Logf("burst 64: release wake-ups %d (theory %d), wasted %d, notifications %d, settle %s; server %v; %.0f ms, acquire p50 %.0f µs p99 %.0f µs, %.2f round trips/acquire, errors %d",
			c.ReleaseWakeups, *c.TheoryWakeups, c.WastedWakeups, c.Notifications, c.Settle, c.Server,
			c.DurationS*1e3, c.AcquireLatencyUs.P50, c.AcquireLatencyUs.P99, c.RoundTripsPerAcquire, c.Errors)
	}
}

// hot runs the closed loop with a lock per client (uncontended), three
// rounds per client count; it reports each round and the median by
// throughput.
func (m *measure) hot() {
	hot, _ := engine.LookupScenario("hot")
	for _, clients := range []int{1, 4, 16} {
		var cs []result.Cell
		for range 3 {
			cs = append(cs, m.run(engine.CellSpec{Scenario: hot, Clients: clients, Locks: clients,
				Acquires: 1000, Warmup: 300 * time.Millisecond}))
		}
		for i, c := range cs {
			m.t.Logf("  round %d: %s", i, line(c))
		}
		slices.SortFunc(cs, func(a, b result.Cell) int { return cmp.Compare(a.AcquiresPerS, b.AcquiresPerS) })
		m.t.Logf("median: %s", line(cs[1]))
	}
}

func line(c result.Cell) string {
	return fmt.Sprintf("hot clients=%d locks=%d %6.0f acq/s  p50 %5.0f µs  p99 %6.0f µs  %5.2f rt/acq  %5.2f notif/acq  errors %d  violations %d",
		c.Clients, c.Locks, c.AcquiresPerS, c.AcquireLatencyUs.P50, c.AcquireLatencyUs.P99,
		c.RoundTripsPerAcquire, c.NotificationsPerAcquire, c.Errors, c.SafetyViolations)
}

// contended sets the driver beside the client library's own
// concurrency.Mutex, two clients taking one lock in turn with no hold:
// the Mutex watches from the revision it read, a watch the server
// catches up on its 100 ms tick, and the driver watches from now.
func (m *measure) contended() {
	hot, _ := engine.LookupScenario("hot")
	c := m.run(engine.CellSpec{Scenario: hot, Clients: 2, Locks: 1, Acquires: 1000, Warmup: 300 * time.Millisecond})
	m.t.Logf("contended: %s  hand-off p50 %.0f µs", line(c), c.HandoffGapUs.P50)
	const rounds = 100
	var (
		mu   sync.Mutex
		lat  []time.Duration
		wg   sync.WaitGroup
		pfx  = fmt.Sprintf("/measure-mutex-%d", time.Now().UnixNano())
		errs = make(chan error, 2)
	)
	start := time.Now()
	for range 2 {
		cli, err := clientv3.New(clientv3.Config{Endpoints: m.servers[etcdmutex.Need.Role], Logger: zap.NewNop()})
		if err != nil {
			m.t.Fatal(err)
		}
		defer cli.Close()
		sess, err := concurrency.NewSession(cli, concurrency.WithTTL(10))
		if err != nil {
			m.t.Fatal(err)
		}
		defer sess.Close()
		mx := concurrency.NewMutex(sess, pfx)
		wg.Go(func() {
			for range rounds {
				t0 := time.Now()
				if err := mx.Lock(context.Background()); err != nil {
					errs <- err
					return
				}
				d := time.Since(t0)
				if err := mx.Unlock(context.Background()); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		m.t.Error(err)
	}
	took := time.Since(start)
	slices.Sort(lat)
	m.t.Logf("contended: concurrency.Mutex ×2 %6.0f acq/s  p50 %5.0f µs  p99 %6.0f µs",
		float64(len(lat))/took.Seconds(), float64(lat[len(lat)/2].Microseconds()), float64(lat[len(lat)*99/100].Microseconds()))
}

// crash: the holder's connection is cut after its grant; its lease
// (session timeout 2 s → TTL 2 s) must expire before the waiter is told.
func (m *measure) crash() {
	crash, _ := engine.LookupScenario("crash")
	c := m.run(engine.CellSpec{Scenario: crash, Clients: 2, Repeat: 3, MaxTime: 2 * time.Minute,
		Config: impl.Config{SessionTimeout: 2 * time.Second}})
	if c.Faults == nil || c.Faults.RecoveryMs == nil {
		m.t.Errorf("crash: no recovery figure: %s", report.FaultSentence(c))
		return
	}
	r := c.Faults.RecoveryMs
	m.t.Logf("crash session timeout 2s ×3: recovery p50 %.0f ms (min %.0f, max %.0f), configured %.0f ms; figures %+v; %s",
		r.P50, r.Min, r.Max, c.Faults.ConfiguredMs, c.Faults.Crash, report.FaultSentence(c))
}
