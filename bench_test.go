package lockbench_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	_ "github.com/lockbench/lockbench/impl/all"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/scenarios"
)

// The servers for benchmarks: LOCKBENCH_REDIS, LOCKBENCH_REDLOCK and
// LOCKBENCH_ZK when set, otherwise a sandbox started on first use and
// stopped by TestMain.
var (
	fleetOnce sync.Once
	fleet     *sandbox.Fleet
	fleetErr  error
	servers   impl.Servers
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fleet != nil {
		fleet.Close()
	}
	os.Exit(code)
}

func benchServers(b testing.TB, needs impl.Needs) impl.Servers {
	b.Helper()
	fleetOnce.Do(func() {
		servers = impl.Servers{
			Redis:   os.Getenv("LOCKBENCH_REDIS"),
			Redlock: splitEnv("LOCKBENCH_REDLOCK"),
			ZK:      splitEnv("LOCKBENCH_ZK"),
		}
		spec := sandbox.Spec{}
		if servers.Redis == "" || len(servers.Redlock) == 0 {
			spec.Redis = 5
		}
		if len(servers.ZK) == 0 {
			spec.ZK = 1
		}
		if spec.Redis == 0 && spec.ZK == 0 {
			return
		}
		fleet, fleetErr = sandbox.Start(context.Background(), spec)
		if fleetErr != nil {
			return
		}
		if servers.Redis == "" {
			servers.Redis = fleet.Redis[0].Addr
		}
		if len(servers.Redlock) == 0 {
			servers.Redlock = fleet.RedisAddrs()
		}
		if len(servers.ZK) == 0 {
			servers.ZK = fleet.ZKAddrs()
		}
	})
	if errors.Is(fleetErr, sandbox.ErrMissing) {
		b.Skip(fleetErr)
	}
	if fleetErr != nil {
		b.Fatal(fleetErr)
	}
	return servers
}

func splitEnv(k string) []string {
	if v := os.Getenv(k); v != "" {
		return strings.Split(v, ",")
	}
	return nil
}

// BenchmarkLock runs every registered implementation with exactly n
// clients, each on its own connection, sharing b.N acquisitions. ns/op is
// wall time per acquisition across all clients (1/throughput); the custom
// metrics come from the cell's own histograms and counters. scenario=hot
// puts every client on one lock; scenario=uncontended gives each its own.
func BenchmarkLock(b *testing.B) {
	hot, _ := scenarios.Lookup("hot")
	for _, name := range impl.Names() {
		if strings.HasPrefix(name, "test-") {
			continue
		}
		d, _ := impl.Lookup(name)
		for _, sc := range []string{"hot", "uncontended"} {
			for _, n := range []int{1, 4, 16} {
				b.Run(fmt.Sprintf("impl=%s/scenario=%s/clients=%d", name, sc, n), func(b *testing.B) {
					srv := benchServers(b, d.Needs)
					locks := 1
					if sc == "uncontended" {
						locks = n
					}
					cell, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
						Impl: name, Scenario: hot, Clients: n, Locks: locks, Acquires: int64(b.N),
						Config:  impl.Config{Servers: srv, Namespace: fmt.Sprintf("bench-%s-%s-%d-%d", name, sc, n, b.N)},
						OnClock: clock(b),
					})
					if err != nil {
						b.Fatal(err)
					}
					if cell.SafetyViolations > 0 {
						b.Fatalf("%d mutual-exclusion violations: %+v", cell.SafetyViolations, cell.Violations)
					}
					if cell.Errors > 0 {
						b.Errorf("%d errors: %v", cell.Errors, cell.ErrorsByClass)
					}
					b.ReportMetric(cell.AcquiresPerS, "acquires/s")
					b.ReportMetric(cell.AcquireLatencyUs.P50*1e3, "p50-ns")
					b.ReportMetric(cell.AcquireLatencyUs.P99*1e3, "p99-ns")
					b.ReportMetric(cell.NotificationsPerAcquire, "notifications/op")
					b.ReportMetric(cell.RetriesPerAcquire, "retries/op")
				})
			}
		}
	}
}

// BenchmarkHarness is the harness's own cost per cycle: one client on the
// in-process lock, so no server is involved. -benchmem shows what the loop
// allocates (nothing, once the cell's histograms are amortised).
func BenchmarkHarness(b *testing.B) {
	hot, _ := scenarios.Lookup("hot")
	b.ReportAllocs()
	_, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
		Impl: "inproc", Scenario: hot, Clients: 1, Acquires: int64(b.N),
		Config:  impl.Config{Namespace: fmt.Sprintf("harness-%d", b.N)},
		OnClock: clock(b),
	})
	if err != nil {
		b.Fatal(err)
	}
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
