package metrics

import (
	"github.com/lockbench/lockbench/engine"
	"testing"

	"github.com/lockbench/lockbench/result"
)

// counter reads a counter of the one cell e has seen.
func counter(t *testing.T, e *Exporter, name string) float64 {
	t.Helper()
	fams, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name && len(f.Metric) == 1 {
			return f.Metric[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no single series %s", name)
	return 0
}

// Live counters count from the first snapshot after the warm-up, never
// go down, and end at the result's figures.
func TestLiveCountersCountFromTheWarmupsEnd(t *testing.T) {
	t.Parallel()
	e := New()
	e.CellStarted("x", "hot", 2)
	steps := []struct {
		p           engine.Progress
		retries, rt float64
	}{
		{engine.Progress{Warmup: true, Counts: result.Counts{Retries: 100, RoundTrips: 300}}, 0, 0},
		{engine.Progress{Acquires: 5, Counts: result.Counts{Retries: 110, RoundTrips: 320}}, 0, 0},
		{engine.Progress{Acquires: 9, Counts: result.Counts{Retries: 125, RoundTrips: 350}}, 15, 30},
		{engine.Progress{Acquires: 9, Counts: result.Counts{Retries: 125, RoundTrips: 350}}, 15, 30},
	}
	for i, s := range steps {
		e.Progress("x", "hot", 2, s.p)
		if r, rt := counter(t, e, Retries), counter(t, e, RoundTrips); r != s.retries || rt != s.rt {
			t.Errorf("step %d: retries %v round trips %v, want %v %v", i, r, rt, s.retries, s.rt)
		}
	}
	e.Result(result.Cell{Impl: "x", Scenario: "hot", Clients: 2, Acquires: 12, Counts: result.Counts{Retries: 27, RoundTrips: 61}})
	for name, want := range map[string]float64{Acquisitions: 12, Retries: 27, RoundTrips: 61} {
		if got := counter(t, e, name); got != want {
			t.Errorf("%s = %v after the result, want %v", name, got, want)
		}
	}
}
