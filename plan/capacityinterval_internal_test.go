package plan

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockbench/lockbench/capacity"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// The latency at the answer pools the interval logs of the trials its
// verdict rests on, and of no other: here two counted trials of 1,000
// arrivals (1–1,000 µs and 1,001–2,000 µs) and, between them, a busy
// machine's trial of 1,000 arrivals at 50 ms that would make the p99 50 ms.
func TestIntervalsPoolTheAnswersTrials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	slo, _ := result.ParseSLO("p99<=10ms")
	c := &Capacity{Base: Plan{Out: dir}, slo: slo}
	started := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	var out result.CapacitySearch
	var cells []result.Cell
	for i, values := range [][2]int64{{1, 1000}, {50000, 50000}, {1001, 2000}} {
		cell := result.Cell{Impl: "inproc", Scenario: "rate", Clients: 32, Acquires: 1000, DurationS: 1}
		h := result.NewHistogram()
		for v := values[0]; v <= values[1]; v++ {
			h.RecordValue(v)
		}
		if values[0] == values[1] {
			h.RecordValues(values[0], 999)
		}
		rel := filepath.Join(result.TrialsDir, "inproc", string(rune('a'+i)))
		if err := os.MkdirAll(filepath.Join(dir, rel), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := hlog.WriteCell(filepath.Join(dir, rel), cell, started, []hlog.Interval{{Start: started, Acquire: h}}, "test"); err != nil {
			t.Fatal(err)
		}
		cells = append(cells, cell)
		out.Trials = append(out.Trials, result.SearchTrial{Rate: 100, Dir: rel})
	}
	counted := capacity.Step{Rate: 100, Pool: 1, PoolSize: 2}
	counted.Pass = true
	last := counted
	last.Pool = 2
	ans := capacity.Answer{Rate: 100, Missed: 105, Steps: []capacity.Step{counted, {Rate: 100, Unknown: true}, last}}
	if err := c.intervals(&out, ans, cells); err != nil {
		t.Fatal(err)
	}
	if iv := out.Interval; iv == nil || *iv != (result.RateInterval{Low: 100, High: 105, LowFrom: capacity.FromBracket, HighFrom: capacity.FromBracket}) {
		t.Errorf("interval %+v, want the bracket [100, 105]", iv)
	}
	li := out.LatencyInterval
	if li == nil {
		t.Fatal("no latency interval")
	}
	// n = 2,000, q = 0.99: ranks 1,971 and 1,990 of the values 1–2,000.
	if li.Arrivals != 2000 || li.Trials != 2 || li.Quantile != "p99" ||
		li.PointUs < 1975 || li.PointUs > 1985 || li.LowUs < 1965 || li.LowUs > 1975 || li.HighUs < 1985 || li.HighUs > 1995 {
		t.Errorf("latency %+v; want p99 ≈ 1,980 µs [1,971, 1,990] from 2,000 arrivals in 2 trials", li)
	}
}
