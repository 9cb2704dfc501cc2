package metrics_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/metrics"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// harnessCell is one client on the in-process lock for n acquisitions —
// no server, so the cell's cost is the harness's own — with the endpoint
// fed and scraped at most maxScrapes times when e is set.
func harnessCell(tb testing.TB, e *metrics.Exporter, n int64, maxScrapes int, onClock func(bool)) result.Cell {
	tb.Helper()
	hot, _ := engine.LookupScenario("hot")
	spec := engine.CellSpec{Impl: "inproc", Scenario: hot, Clients: 1, Acquires: n, OnClock: onClock,
		Config: impl.Config{Namespace: fmt.Sprintf("%s-%d", tb.Name(), n)}}
	stop := func() {}
	if e != nil {
		spec.ProgressEvery = 100 * time.Millisecond
		spec.Progress = func(p engine.Progress) { e.Progress("inproc", "hot", 1, p) }
		spec.OnInterval = func(c result.Cell, _ time.Time, iv hlog.Interval) { e.Interval(c, iv) }
		stop = scrapeWhileRunning(tb, e, maxScrapes)
	}
	cell, err := engine.RunCell(context.Background(), spec)
	stop()
	if err != nil {
		tb.Fatal(err)
	}
	if e != nil {
		e.Result(cell)
	}
	return cell
}

// scrapeWhileRunning scrapes e every 100ms, at most max times, until
// stopped: a bound on the scrapes' own allocations, whatever the pace.
func scrapeWhileRunning(tb testing.TB, e *metrics.Exporter, max int) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for range max {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if resp, err := http.Get("http://" + e.Addr() + "/metrics"); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// With the endpoint on, fed and scraped, a lock cycle still allocates
// nothing: a cell of n acquisitions allocates far fewer than n times (an
// allocation per cycle would make it at least n). The endpoint's own
// allocations are per second and per scrape, and the scrapes are bounded.
func TestRecordingPathAllocatesNothingWithEndpointOn(t *testing.T) {
	if testing.Short() {
		t.Skip("half a million lock cycles")
	}
	e, err := metrics.Listen("127.0.0.1:0", metrics.WithLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	const n = 500_000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	// Read as the clients stop: the safety check that follows the cell
	// allocates as it reads the history, off the recording path.
	cell := harnessCell(t, e, n, 5, func(running bool) {
		if !running {
			runtime.ReadMemStats(&after)
		}
	})
	t.Logf("safety check: %d operations in %.0f ms, %.0f MB allocated", cell.Safety.Ops, cell.Safety.CheckMs, cell.Safety.CheckAllocMB)
	allocs := after.Mallocs - before.Mallocs
	t.Logf("%d acquisitions, %d allocations in the whole cell (%.4f per cycle)", cell.Acquires, allocs, float64(allocs)/n)
	if cell.Acquires != n || allocs >= n/2 {
		t.Errorf("%d acquisitions, %d allocations: a cycle allocates", cell.Acquires, allocs)
	}
}

// BenchmarkHarnessEndpoint is BenchmarkHarness with the endpoint off, on
// (fed every 100ms, not scraped) and scraped (every 100ms, up to 50
// times — far more often than Prometheus's 15s): allocs/op and
// cpu-ns/op show what the endpoint costs a lock cycle, and what its
// scrapes do.
func BenchmarkHarnessEndpoint(b *testing.B) {
	for _, bc := range []struct {
		name    string
		on      bool
		scrapes int
	}{{"off", false, 0}, {"on", true, 0}, {"scraped", true, 50}} {
		b.Run(bc.name, func(b *testing.B) {
			var e *metrics.Exporter
			if bc.on {
				var err error
				if e, err = metrics.Listen("127.0.0.1:0", metrics.WithLinger(0)); err != nil {
					b.Fatal(err)
				}
				defer e.Close(context.Background())
			}
			b.ReportAllocs()
			cell := harnessCell(b, e, int64(b.N), bc.scrapes, func(running bool) {
				if running {
					b.ResetTimer()
				} else {
					b.StopTimer()
				}
			})
			if g := cell.Generator; g != nil {
				b.ReportMetric(g.CPUSeconds*1e9/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
