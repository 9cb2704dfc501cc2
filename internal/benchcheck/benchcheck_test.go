package benchcheck

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

const oldTxt = `goos: linux
pkg: github.com/lockbench/lockbench
BenchmarkLock/impl=zk-pred/scenario=hot/clients=4-2   200  500000 ns/op  2000 acquires/s  3000000 p99-ns  1.00 notifications/op
BenchmarkLock/impl=zk-pred/scenario=hot/clients=4-2   200  500000 ns/op  2000 acquires/s  3100000 p99-ns  1.00 notifications/op
BenchmarkLock/impl=zk-pred/scenario=hot/clients=4-2   200  500000 ns/op  2000 acquires/s  9000000 p99-ns  1.00 notifications/op
BenchmarkLock/impl=redis/scenario=hot/clients=4-2     200  50000 ns/op  20000 acquires/s  300000 p99-ns  0 notifications/op
`

func TestCompareFlagsOnlyRealRegressions(t *testing.T) {
	newTxt := `BenchmarkLock/impl=zk-pred/scenario=hot/clients=4-2   200  500000 ns/op  1500 acquires/s  3200000 p99-ns  3.00 notifications/op
BenchmarkLock/impl=redis/scenario=hot/clients=4-2     200  50000 ns/op  20000 acquires/s  600000 p99-ns  0 notifications/op
BenchmarkLock/impl=redlock/scenario=hot/clients=4-2   200  50000 ns/op  20000 acquires/s  600000 p99-ns  0 notifications/op
`
	old, err := Read(strings.NewReader(oldTxt), "old")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := Read(strings.NewReader(newTxt), "new")
	if err != nil {
		t.Fatal(err)
	}
	limits := append(DefaultLimits, Limit{Unit: "acquires/s", Max: 0.10, Lower: true})
	rows := Compare(old, cur, limits)
	got := map[string]bool{}
	for _, r := range rows {
		got[r.Bench[strings.Index(r.Bench, "impl="):]+" "+r.Unit] = r.Regressed
	}
	want := map[string]bool{
		// median p99 3.1 ms → 3.2 ms: +3%, fine; the 9 ms outlier is outvoted
		"impl=zk-pred/scenario=hot/clients=4 p99-ns":           false,
		"impl=zk-pred/scenario=hot/clients=4 notifications/op": true,  // 1 → 3
		"impl=zk-pred/scenario=hot/clients=4 acquires/s":       true,  // −25%
		"impl=redis/scenario=hot/clients=4 p99-ns":             true,  // doubled
		"impl=redis/scenario=hot/clients=4 notifications/op":   false, // 0 → 0
		"impl=redis/scenario=hot/clients=4 acquires/s":         false,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: regressed=%v, want %v", k, got[k], v)
		}
	}
	var buf bytes.Buffer
	if n := Write(&buf, rows); n != 3 {
		t.Errorf("Write counted %d regressions, want 3:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "new (no baseline)") {
		t.Errorf("a benchmark only in the new run is not listed:\n%s", buf.String())
	}
}

func TestZeroToSomeIsInfinite(t *testing.T) {
	old := map[string]map[string][]float64{"B": {"notifications/op": {0, 0}}}
	cur := map[string]map[string][]float64{"B": {"notifications/op": {0.5}}}
	rows := Compare(old, cur, DefaultLimits)
	if len(rows) != 1 || !math.IsInf(rows[0].Change, 1) || !rows[0].Regressed {
		t.Fatalf("%+v", rows)
	}
}

func TestParseLimit(t *testing.T) {
	for in, want := range map[string]Limit{
		"p99-ns=25%":           {Unit: "p99-ns", Max: 0.25},
		"notifications/op=0.1": {Unit: "notifications/op", Max: 0.1},
		"acquires/s=-10%":      {Unit: "acquires/s", Max: 0.10, Lower: true},
		"p50-ns=+5%":           {Unit: "p50-ns", Max: 0.05},
	} {
		got, err := ParseLimit(in)
		if err != nil || got.Unit != want.Unit || got.Lower != want.Lower || math.Abs(got.Max-want.Max) > 1e-12 {
			t.Errorf("%s: %+v %v", in, got, err)
		}
	}
	for _, bad := range []string{"p99-ns", "=5%", "p99-ns=abc", "p99-ns=-x%"} {
		if _, err := ParseLimit(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestReadRejectsGarbage(t *testing.T) {
	if _, err := Read(strings.NewReader("no benchmarks here\n"), "x"); err == nil {
		t.Fatal("empty input accepted")
	}
}

func TestSignificanceGuardsAgainstNoise(t *testing.T) {
	old := map[string]map[string][]float64{"B": {"p99-ns": {100, 140, 90, 150, 110, 130}}}
	// Median up 30%, but the runs overlap: not significant.
	noisy := map[string]map[string][]float64{"B": {"p99-ns": {95, 160, 150, 120, 170, 155}}}
	// Every run slower: significant.
	slower := map[string]map[string][]float64{"B": {"p99-ns": {200, 210, 190, 220, 205, 215}}}
	if r := Compare(old, noisy, DefaultLimits)[0]; !r.Tested || r.Regressed {
		t.Errorf("overlapping runs flagged: %+v", r)
	}
	if r := Compare(old, slower, DefaultLimits)[0]; !r.Tested || !r.Regressed || r.P >= 0.05 {
		t.Errorf("clear slowdown missed: %+v", r)
	}
}

// A benchmark of the baseline that the new run lacks, or a gated unit it
// stopped reporting, is a Gone row: the gate cannot vouch for it.
func TestCompareReportsGoneBenchmarks(t *testing.T) {
	old := map[string]map[string][]float64{
		"BenchmarkA":       {"p99-ns": {100}, "notifications/op": {1}},
		"BenchmarkB":       {"p99-ns": {100}},
		"BenchmarkHarness": {"ns/op": {10}},
		"BenchmarkC":       {"p99-ns": {100}, "retries/op": {1}},
		"BenchmarkD":       {"p99-ns": {100}},
	}
	cur := map[string]map[string][]float64{
		"BenchmarkA": {"notifications/op": {1}},
		"BenchmarkC": {"p99-ns": {100}}, // retries/op is not gated
		"BenchmarkD": {"ns/op": {5}},    // ran, but no gated unit left
	}
	rows := Compare(old, cur, DefaultLimits)
	got := Gone(rows)
	want := []string{"BenchmarkA (p99-ns)", "BenchmarkB", "BenchmarkD (p99-ns)", "BenchmarkHarness"}
	if !slices.Equal(got, want) {
		t.Errorf("Gone = %q, want %q", got, want)
	}
	var buf bytes.Buffer
	if n := Write(&buf, rows); n != 0 || strings.Count(buf.String(), "MISSING in new") != 4 {
		t.Errorf("Write counted %d regressions:\n%s", n, buf.String())
	}
}

// go test prints a skipped benchmark as 0 iterations and NaN ns/op: it was
// not measured, so it does not count as present.
func TestReadDropsSkippedBenchmarks(t *testing.T) {
	got, err := Read(strings.NewReader("BenchmarkA-2 0 NaN ns/op\nBenchmarkB-2 10 5 ns/op\n"), "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["BenchmarkA"]; ok || got["BenchmarkB"] == nil {
		t.Errorf("%v", got)
	}
}

func TestReadRejectsFailures(t *testing.T) {
	for in, want := range map[string]string{
		oldTxt + "--- FAIL: BenchmarkLock/impl=redis\n    x_test.go:6: boom\n--- FAIL: BenchmarkLock\nFAIL\nexit status 1\nFAIL\tgithub.com/lockbench/lockbench\t0.049s\n": "x: go test reported FAIL: BenchmarkLock/impl=redis, package github.com/lockbench/lockbench",
		oldTxt + "    --- FAIL: BenchmarkLock/impl=redis/scenario=hot\n": "x: go test reported FAIL: BenchmarkLock/impl=redis/scenario=hot",
		"FAIL\tgithub.com/lockbench/lockbench [build failed]\n":          "x: go test reported FAIL: package github.com/lockbench/lockbench [build failed]",
		oldTxt + "FAIL\n": "x: go test reported FAIL (line 7)",
	} {
		_, err := Read(strings.NewReader(in), "x")
		if !errors.Is(err, ErrFailed) || err.Error() != want {
			t.Errorf("%q:\n got %v\nwant %s", in, err, want)
		}
	}
	// Words that merely contain FAIL are not failures.
	if _, err := Read(strings.NewReader(oldTxt+"FAILOVER: none\n    log: FAIL\nok  \tgithub.com/lockbench/lockbench\t1s\n"), "x"); err != nil {
		t.Error(err)
	}
}

func TestParseLimitRejectsNonFinite(t *testing.T) {
	for _, bad := range []string{"p99-ns=NaN", "p99-ns=Inf", "p99-ns=+Inf%", "p99-ns=-Inf", "p99-ns=1e400"} {
		if l, err := ParseLimit(bad); err == nil {
			t.Errorf("%q accepted: %+v", bad, l)
		}
	}
}

func TestUnits(t *testing.T) {
	a := map[string]map[string][]float64{"A": {"p99-ns": {1}, "ns/op": {1}}}
	b := map[string]map[string][]float64{"B": {"acquires/s": {1}, "ns/op": {1}}}
	if got := Units(a, b); !slices.Equal(got, []string{"acquires/s", "ns/op", "p99-ns"}) {
		t.Errorf("%q", got)
	}
}

// The bench.txt of partial lockbench results is refused, naming the file
// and what it lacks: its missing cells would read as benchmarks gone, or
// as nothing to gate.
func TestReadRefusesPartialResults(t *testing.T) {
	in := "lockbench-partial: PARTIAL: merged with --partial; missing 1 cell: impl=redis/scenario=hot/clients=4\n" +
		"pkg: lockbench\nBenchmarkLock/impl=redis/scenario=hot/clients=2 1000 50000 ns/op\n"
	_, err := Read(strings.NewReader(in), "new/bench.txt")
	if !errors.Is(err, ErrPartial) || !strings.Contains(err.Error(), "new/bench.txt") || !strings.Contains(err.Error(), "clients=4") {
		t.Fatalf("Read of a partial bench.txt: %v; want ErrPartial naming the file and the missing cell", err)
	}
	if _, err := Read(strings.NewReader(strings.SplitN(in, "\n", 2)[1]), "new/bench.txt"); err != nil {
		t.Fatalf("the same without its partial line: %v", err)
	}
}

// A metric a benchmark reports as NaN is unknown on that machine: it is
// read as absent, so a unit known in the old run and unknown in the new
// one shows as missing there, and an infinity is still refused.
func TestReadUnknownMetrics(t *testing.T) {
	got, err := Read(strings.NewReader("BenchmarkH-2 10 5 ns/op 3.0 wakeups/handoff NaN server-cpu-us/handoff\n"), "x")
	if err != nil {
		t.Fatal(err)
	}
	units := got["BenchmarkH"]
	if len(units["wakeups/handoff"]) != 1 || units["server-cpu-us/handoff"] != nil {
		t.Errorf("read %v, want wakeups and no server CPU", units)
	}
	if _, err := Read(strings.NewReader("BenchmarkH-2 10 5 ns/op +Inf p99-ns\n"), "x"); err == nil {
		t.Error("an infinity was read as a measurement")
	}
}
