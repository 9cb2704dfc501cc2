package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/suite"
)

// bundle writes a bundle of two workloads — a repeated hot loop for two
// locks, a pause fault that lost updates on one — and returns its dir.
func bundle(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b := &suite.Bundle{Schema: suite.BundleSchema, Suite: "v1", Tier: suite.Standard, Part: "0/1", Rows: []string{"redis", "zk-pred"},
		Started: time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC),
		Machine: suite.Fingerprint{CPUModel: "Test CPU", Cores: 2, Memory: "2097152 kB"},
		Workloads: []suite.Run{
			{Name: "hot", Question: "how fast?", Command: "run", Dir: "hot"},
			{Name: "faults", Question: "safe?", Command: "run", Dir: "faults", Exit: 3},
		}}
	if err := b.Write(dir); err != nil {
		t.Fatal(err)
	}
	est := func(p, lo, hi float64) result.Estimate {
		return result.Estimate{Point: p, Low: lo, High: hi, Rounds: []float64{lo, p, hi}}
	}
	hot := []result.Cell{
		{Impl: "redis", Scenario: "hot", Kind: result.KindClosed, Clients: 8, Acquires: 9000, AcquiresPerS: 3000,
			Rounds: &result.RoundFigures{N: 3, AcquiresPerS: est(3000, 2900, 3100), P99: est(900, 800, 1000)}},
		{Impl: "zk-pred", Scenario: "hot", Kind: result.KindClosed, Clients: 8, Acquires: 3000, AcquiresPerS: 1000,
			AcquireLatencyUs: result.Latency{P99: 2500}},
	}
	faults := []result.Cell{
		{Impl: "redis", Scenario: "pause", Kind: result.KindFault, Clients: 2, Acquires: 6, SafetyViolations: 3,
			Faults: &result.Faults{Repeats: 3, ConfiguredMs: 2000, RecoveryMs: &result.Spread{Count: 3, P50: 2100}},
			Safety: &result.Safety{Guarded: true, Tokens: result.TokensCounter, GuardCounts: result.GuardCounts{LostUpdates: 2}}},
		{Impl: "zk-pred", Scenario: "pause", Kind: result.KindFault, Clients: 2, Acquires: 6,
			Faults: &result.Faults{Repeats: 3, ConfiguredMs: 2000, RecoveryMs: &result.Spread{Count: 3, P50: 2300}},
			Safety: &result.Safety{Guarded: true, Tokens: result.TokensLock}},
	}
	for name, cells := range map[string][]result.Cell{"hot": hot, "faults": faults} {
		os.MkdirAll(filepath.Join(dir, name), 0o755)
		if err := result.WriteJSON(filepath.Join(dir, name, result.SummaryFile), &result.Summary{Schema: result.SchemaVersion, Cells: cells}); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRender(t *testing.T) {
	dir := bundle(t)
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	for _, want := range []string{
		`<a href="locks/redis.html">redis</a>`, `<a href="locks/zk-pred.html">zk-pred</a>`,
		`<th class="wl" colspan="2">hot</th>`, // acq/s and p99 at 8 clients
		`data-v="3000"`, `[2900/s, 3100/s]`,   // the interval of a repeated figure
		`<a href="hot/report.html" title="redis_hot_c8">3000/s</a>`,
		`Test CPU, 2 cores, 2.0 GiB memory`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %s", want)
		}
	}
	// zk-pred's hot figures were measured once: no interval.
	if strings.Contains(page, `[1000/s`) {
		t.Error("a figure measured once has an interval")
	}
	// hot's columns come before faults' (the bundle's order).
	if strings.Index(page, ">hot</th>") > strings.Index(page, ">faults</th>") {
		t.Error("faults' columns before hot's")
	}
	// redis lost 2 updates where its users write: a finding, marked; zk-pred lost none.
	lostRow := func(impl string) string {
		i := strings.Index(page, `locks/`+impl+`.html`)
		row := page[i:]
		return row[:strings.Index(row, "</tr>")]
	}
	if r := lostRow("redis"); !strings.Contains(r, `class="bad"`) {
		t.Errorf("redis's row marks no finding: %s", r)
	}
	if r := lostRow("zk-pred"); strings.Contains(r, `class="bad"`) {
		t.Errorf("zk-pred's row marks a finding: %s", r)
	}
	lock, err := os.ReadFile(filepath.Join(dir, LocksDir, "redis.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<a href="../index.html">`, `../hot/report.html`, `../faults/report.html`, `pause: recovery p50`, `1.05×`} {
		if !strings.Contains(string(lock), want) {
			t.Errorf("redis.html lacks %s", want)
		}
	}
}

// TestRenderKeepsAFailedWorkload: a workload without results is named
// with why, and the others still render.
func TestRenderKeepsAFailedWorkload(t *testing.T) {
	dir := bundle(t)
	b, _ := suite.ReadBundle(dir)
	b.Workloads = append(b.Workloads, suite.Run{Name: "herd", Dir: "herd", Exit: 1, Error: "etcd did not start"})
	b.Write(dir)
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, IndexFile))
	if !strings.Contains(string(raw), "failed: etcd did not start") || !strings.Contains(string(raw), "3000/s") {
		t.Error("a failed workload hid the table or its reason")
	}
}

func TestWriteMarkdown(t *testing.T) {
	dir := bundle(t)
	b, err := suite.ReadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	b.Ended = b.Started.Add(61 * time.Minute)
	var buf strings.Builder
	if err := WriteMarkdown(&buf, dir, b); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"# The lockbench table: suite v1, standard tier",
		"`lockbench suite --suite v1 --tier standard`",
		"The run took 1h1m0s.",
		"| lock | acq/s (8) | p99 (8) |",
		"| redis | 3000/s [2900/s, 3100/s] | 900µs [800µs, 1.00ms] |",
		"| zk-pred | 1000/s | 2.50ms |",
		"**2** ✗", // redis's lost updates
		"- **wake-ups / hand-off**: ",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("results.md lacks %q", want)
		}
	}
}

// A cell whose history is not linearizable is unsafe though it counted no
// violation and lost no update: its safety figures are marked, with the
// judgement's words, as the exit status and the Safety line say.
func TestUnlinearizableCellIsMarked(t *testing.T) {
	dir := bundle(t)
	cells := []result.Cell{{Impl: "zk-pred", Scenario: "pause", Kind: result.KindFault, Clients: 2, Acquires: 6,
		Faults: &result.Faults{Repeats: 3, ConfiguredMs: 2000, RecoveryMs: &result.Spread{Count: 3, P50: 2300}},
		Safety: &result.Safety{Guarded: true, Tokens: result.TokensLock, Linearizable: result.NotLinearizable}}}
	if err := result.WriteJSON(filepath.Join(dir, "faults", result.SummaryFile), &result.Summary{Schema: result.SchemaVersion, Cells: cells}); err != nil {
		t.Fatal(err)
	}
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, IndexFile))
	page := string(raw)
	i := strings.Index(page, `locks/zk-pred.html`)
	row := page[i:]
	row = row[:strings.Index(row, "</tr>")]
	if strings.Count(row, `class="bad"`) != 2 || !strings.Contains(row, "linearizable") {
		t.Errorf("zk-pred's row marks %d safety figures, want its 2 marked and the reason named: %s", strings.Count(row, `class="bad"`), row)
	}
}

// A fairness index prints its two decimals when it is exactly 1, as it
// does at 0.99, so that a sorted column reads alike; a count stays whole.
func TestFormatKeepsAnIndexsDecimals(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{{1, suite.UnitIndex, "1.00"}, {0.987, suite.UnitIndex, "0.99"}, {64, suite.UnitCount, "64"}, {60.82, suite.UnitCount, "60.82"}} {
		if got := format(c.v, c.unit); got != c.want {
			t.Errorf("format(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}
