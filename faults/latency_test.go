package faults_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// TestLatencyMergesEveryRepeat runs latency with --repeat 3 as a run does,
// its intervals streamed to a sink (the .hlog): the cell must count every
// repeat's acquisitions in its figures — per client, and in its latency
// distribution, whose mean must be that of every interval streamed — and
// the intervals must reach the sink as the latency cell's, not as the hot
// loop's it runs. It needs no server: the in-process lock has none, so no
// proxy delays it.
func TestLatencyMergesEveryRepeat(t *testing.T) {
	const repeat, acquires, clients = 3, 3000, 2
	sc, _ := engine.LookupScenario("latency")
	var (
		mu     sync.Mutex
		labels = map[string]int{}
		count  int64
		sum    float64
	)
	res, err := engine.RunCellDetail(context.Background(), engine.CellSpec{
		Impl: "inproc", Scenario: sc, Clients: clients, Acquires: acquires, Repeat: repeat, MaxTime: time.Minute,
		Config: impl.Config{Namespace: t.Name()},
		OnInterval: func(c result.Cell, _ time.Time, iv hlog.Interval) {
			mu.Lock()
			defer mu.Unlock()
			labels[c.Key()]++
			count += iv.Acquire.TotalCount()
			sum += iv.Acquire.Mean() * float64(iv.Acquire.TotalCount())
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Cell
	if l := c.Faults.Latency; l == nil || l.Proxies != 0 || l.NetDelayMs != 1 {
		t.Errorf("latency figures %+v: want no proxy (no server) and the default 1 ms delay", l)
	}
	if c.Acquires != repeat*acquires {
		t.Fatalf("acquisitions %d, want %d from %d repeats", c.Acquires, repeat*acquires, repeat)
	}
	if count != c.Acquires {
		t.Errorf("the intervals streamed hold %d acquisitions, the cell %d", count, c.Acquires)
	}
	want := (result.Cell{Impl: "inproc", Scenario: "latency", Clients: clients}).Key()
	if len(labels) != 1 || labels[want] == 0 {
		t.Errorf("intervals streamed as %v, want all as %s", labels, want)
	}
	var per int64
	if c.Fairness != nil {
		for _, n := range c.Fairness.PerClient {
			per += n
		}
	}
	if per != c.Acquires {
		t.Errorf("per-client acquisitions add up to %d, want %d: fairness of one repeat only", per, c.Acquires)
	}
	if mean := sum / float64(count); math.Abs(c.AcquireLatencyUs.Mean-mean) > 1e-6*max(mean, 1) {
		t.Errorf("acquire mean %.6f µs, want %.6f µs, the mean of every repeat's intervals", c.AcquireLatencyUs.Mean, mean)
	}
	if c.DurationS <= 0 || c.AcquiresPerS != float64(c.Acquires)/c.DurationS {
		t.Errorf("acq/s %.1f over %.3f s: not derived from the repeats' sum", c.AcquiresPerS, c.DurationS)
	}
}
