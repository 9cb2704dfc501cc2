package report

import (
	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"

	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSLO(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want SLO
		bad  bool
	}{
		{in: "p99=10ms", want: SLO{Quantile: "p99", Limit: 10 * time.Millisecond}},
		{in: "p50=250us", want: SLO{Quantile: "p50", Limit: 250 * time.Microsecond}},
		{in: "p90=1.5s", want: SLO{Quantile: "p90", Limit: 1500 * time.Millisecond}},
		{in: "p999=20ms", want: SLO{Quantile: "p999", Limit: 20 * time.Millisecond}},
		{in: "P99.9=20ms", want: SLO{Quantile: "p999", Limit: 20 * time.Millisecond}},
		{in: "max=1s", want: SLO{Quantile: "max", Limit: time.Second}},
		{in: " p99 = 10ms ", want: SLO{Quantile: "p99", Limit: 10 * time.Millisecond}},
		{in: "", bad: true},
		{in: "p99", bad: true},
		{in: "p95=10ms", want: SLO{Quantile: "p95", Limit: 10 * time.Millisecond}},
		{in: "p97=10ms", bad: true},
		{in: "errors<=1%", bad: true},
		{in: "p99<=5ms,errors>=1%", bad: true},
		{in: "p99=10", bad: true},
		{in: "p99=0s", bad: true},
		{in: "p99=-1ms", bad: true},
		{in: "p99=fast", bad: true},
	} {
		got, err := result.ParseSLO(tc.in)
		switch {
		case tc.bad && err == nil:
			t.Errorf("results.ParseSLO(%q) = %v, want an error", tc.in, got)
		case tc.bad && !errors.Is(err, result.ErrSLO):
			t.Errorf("results.ParseSLO(%q) error %v does not wrap result.ErrSLO", tc.in, err)
		case !tc.bad && err != nil:
			t.Errorf("results.ParseSLO(%q): %v", tc.in, err)
		case !tc.bad && got != tc.want:
			t.Errorf("results.ParseSLO(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
		if err == nil {
			if again, err := result.ParseSLO(got.String()); err != nil || again != got {
				t.Errorf("results.ParseSLO(%q.String()) = %v, %v", got, again, err)
			}
		}
	}
}

func TestCapacity(t *testing.T) {
	t.Parallel()
	cell := func(sc string, n int, perS, p99 float64) Cell {
		return Cell{Impl: "x", Scenario: sc, Clients: n, Acquires: 100, AcquiresPerS: perS,
			AcquireLatencyUs: Latency{P50: p99 / 4, P99: p99, Max: p99 * 10}}
	}
	slo := SLO{Quantile: "p99", Limit: 10 * time.Millisecond}
	tests := []struct {
		name    string
		cells   []Cell
		slo     SLO
		met     bool
		clients int
		perS    float64
		missed  int
		tested  []int
	}{
		{name: "all meet: the largest", cells: []Cell{cell("hot", 1, 100, 1000), cell("hot", 4, 300, 4000), cell("hot", 16, 400, 9000)},
			slo: slo, met: true, clients: 16, perS: 400, tested: []int{1, 4, 16}},
		{name: "the knee", cells: []Cell{cell("hot", 1, 100, 1000), cell("hot", 4, 300, 4000), cell("hot", 16, 400, 30000)},
			slo: slo, met: true, clients: 4, perS: 300, missed: 16, tested: []int{1, 4, 16}},
		{name: "in any order", cells: []Cell{cell("hot", 16, 400, 30000), cell("hot", 1, 100, 1000), cell("hot", 4, 300, 4000)},
			slo: slo, met: true, clients: 4, perS: 300, missed: 16, tested: []int{1, 4, 16}},
		{name: "none meets", cells: []Cell{cell("hot", 1, 100, 11000), cell("hot", 4, 300, 40000)},
			slo: slo, met: false, missed: 1, tested: []int{1, 4}},
		{name: "not monotonic: the largest that met", cells: []Cell{cell("hot", 1, 100, 1000), cell("hot", 4, 300, 12000), cell("hot", 16, 350, 9000)},
			slo: slo, met: true, clients: 16, perS: 350, missed: 4, tested: []int{1, 4, 16}},
		{name: "exactly at the limit meets", cells: []Cell{cell("hot", 2, 50, 10000)},
			slo: slo, met: true, clients: 2, perS: 50, tested: []int{2}},
		{name: "another quantile", cells: []Cell{cell("hot", 1, 100, 1000), cell("hot", 4, 300, 4000)},
			slo: SLO{Quantile: "max", Limit: 20 * time.Millisecond}, met: true, clients: 1, perS: 100, missed: 4, tested: []int{1, 4}},
		{name: "unsafe never meets", cells: func() []Cell {
			c := []Cell{cell("hot", 1, 100, 1000), cell("hot", 4, 300, 4000)}
			c[1].SafetyViolations = 1
			return c
		}(), slo: slo, met: true, clients: 1, perS: 100, missed: 4, tested: []int{1, 4}},
		{name: "no acquisitions never meets", cells: []Cell{{Impl: "x", Scenario: "hot", Clients: 1, Errors: 5}},
			slo: slo, met: false, missed: 1, tested: []int{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows := judge.Capacity(tc.cells, tc.slo)
			if len(rows) != 1 {
				t.Fatalf("%d rows, want 1", len(rows))
			}
			r := rows[0]
			if r.Met != tc.met || r.Clients != tc.clients || r.AcquiresPerS != tc.perS || r.FirstMissed != tc.missed ||
				!slices.Equal(r.Tested, tc.tested) {
				t.Errorf("got %+v, want met=%v clients=%d perS=%v firstMissed=%d tested=%v",
					r, tc.met, tc.clients, tc.perS, tc.missed, tc.tested)
			}
			if d := DescribeCapacity(r, tc.slo); (!tc.met) != strings.HasPrefix(d, "no client count met") {
				t.Errorf("Describe = %q", d)
			}
		})
	}
}

func TestCapacityGroups(t *testing.T) {
	t.Parallel()
	rows := judge.Capacity(append(fixtureCells(), Cell{Impl: "redis", Scenario: "crash", Clients: 2, Acquires: 3}),
		SLO{Quantile: "p99", Limit: 10 * time.Millisecond})
	var got []string
	for _, r := range rows {
		got = append(got, r.Impl+"/"+r.Scenario)
	}
	want := []string{"redis/hot", "redis/burst", "zk-naive/hot", "zk-naive/burst", "zk-pred/hot", "zk-pred/burst"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v (first-appearance order, fault scenarios left out)", got, want)
	}
	if d := DescribeCapacity(rows[0], SLO{Quantile: "p99", Limit: 10 * time.Millisecond}); d != "16 clients at 11,500 acq/s (p99 8.20ms ≤ 10ms); the largest count tried, so capacity may be higher" {
		t.Errorf("Describe = %q", d)
	}
}

func TestCapacityRefusesCellsThatShedLoad(t *testing.T) {
	t.Parallel()
	slo, _ := result.ParseSLO("p99=10ms")
	ok := Cell{Impl: "x", Scenario: "rate", Clients: 4, Acquires: 1000, AcquiresPerS: 500, AcquireLatencyUs: Latency{P99: 2000}}
	dropping := ok
	dropping.Clients = 8
	dropping.Open = &result.OpenLoop{Offered: 2000, Dropped: 1000}
	failing := ok
	failing.Clients = 16
	failing.Errors = 50
	rows := judge.Capacity([]Cell{ok, dropping, failing}, slo)
	if len(rows) != 1 || !rows[0].Met || rows[0].Clients != 4 || rows[0].FirstMissed != 8 {
		t.Fatalf("%+v", rows)
	}
}
