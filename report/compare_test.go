package report

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

func metricOf(t *testing.T, d CellDelta, name string) MetricDelta {
	t.Helper()
	for _, m := range d.Metrics {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("%s has no metric %q", d.Key, name)
	return MetricDelta{}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	base := Cell{Impl: "zk-pred", Scenario: "hot", Clients: 4, AcquiresPerS: 1000,
		AcquireLatencyUs: Latency{P50: 500, P99: 2000}, NotificationsPerAcquire: 1}
	changed := base
	changed.AcquiresPerS = 1100         // +10%: real
	changed.AcquireLatencyUs.P50 = 510  // +2%: noise
	changed.AcquireLatencyUs.P99 = 3000 // +50%: worse
	changed.NotificationsPerAcquire = 1 // same
	gone := Cell{Impl: "redis", Scenario: "hot", Clients: 1}
	added := Cell{Impl: "redis", Scenario: "hot", Clients: 64}

	cmp := Compare([]Cell{base, gone}, []Cell{changed, added}, CompareOptions{})
	if len(cmp.Cells) != 1 || cmp.Cells[0].Key != base.Key() {
		t.Fatalf("cells %+v, want only %s", cmp.Cells, base.Key())
	}
	if !slices.Equal(cmp.OnlyOld, []string{gone.Key()}) || !slices.Equal(cmp.OnlyNew, []string{added.Key()}) {
		t.Errorf("only old %v, only new %v", cmp.OnlyOld, cmp.OnlyNew)
	}
	d := cmp.Cells[0]
	for _, tc := range []struct {
		name          string
		old, new, chg float64
		noise, better bool
	}{
		{"acq/s", 1000, 1100, 0.10, false, true},
		{"p50", 500, 510, 0.02, true, false},
		{"p99", 2000, 3000, 0.50, false, false},
		{"notif/acq", 1, 1, 0, true, false},
	} {
		m := metricOf(t, d, tc.name)
		if m.Old != tc.old || m.New != tc.new || math.Abs(m.Change-tc.chg) > 1e-9 || m.Noise != tc.noise || m.Better != tc.better {
			t.Errorf("%s: %+v, want old %v new %v change %v noise %v better %v", tc.name, m, tc.old, tc.new, tc.chg, tc.noise, tc.better)
		}
	}

	// A wider noise threshold swallows the 10%.
	wide := Compare([]Cell{base}, []Cell{changed}, CompareOptions{Noise: 0.2})
	if m := metricOf(t, wide.Cells[0], "acq/s"); !m.Noise {
		t.Errorf("with 20%% noise, +10%% throughput is %+v, want noise", m)
	}

	var out strings.Builder
	if err := cmp.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{base.Key(), "1,000", "→ 1,100", "+10.0%", "better", "~ noise", "+50.0%", "worse",
		"only in old: " + gone.Key(), "only in new: " + added.Key()} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCompareFromZero(t *testing.T) {
	t.Parallel()
	a := Cell{Impl: "x", Scenario: "hot", Clients: 2}
	b := a
	b.NotificationsPerAcquire = 0.5
	m := metricOf(t, Compare([]Cell{a}, []Cell{b}, CompareOptions{}).Cells[0], "notif/acq")
	if !math.IsInf(m.Change, 1) || m.Noise {
		t.Errorf("0 → 0.5: %+v, want +Inf and not noise", m)
	}
	if m := metricOf(t, Compare([]Cell{a}, []Cell{a}, CompareOptions{}).Cells[0], "acq/s"); m.Change != 0 || !m.Noise {
		t.Errorf("0 → 0: %+v, want no change, noise", m)
	}
}

// logWithRates builds an interval log whose 1 s intervals hold the given
// numbers of acquisitions.
func logWithRates(rates ...int) *CellLog {
	var l CellLog
	for i, n := range rates {
		h := result.NewHistogram()
		h.RecordValues(100, int64(n))
		h.SetTag(result.TagAcquire)
		h.SetStartTimeMs(int64(i) * 1000)
		h.SetEndTimeMs(int64(i+1) * 1000)
		l.Intervals = append(l.Intervals, h)
	}
	return &l
}

func TestCompareNoiseFromIntervals(t *testing.T) {
	t.Parallel()
	old := Cell{Impl: "x", Scenario: "hot", Clients: 8, AcquiresPerS: 1000}
	new := old
	new.AcquiresPerS = 1100 // +10%: beyond the 5% threshold
	key := old.Key()

	steady := CompareOptions{
		OldLogs: map[string]*CellLog{key: logWithRates(1000, 1001, 999, 1000)},
		NewLogs: map[string]*CellLog{key: logWithRates(1100, 1101, 1099, 1100)},
	}
	if m := metricOf(t, Compare([]Cell{old}, []Cell{new}, steady).Cells[0], "acq/s"); m.Noise {
		t.Errorf("steady runs: %+v, want a real change", m)
	}
	noisy := CompareOptions{
		OldLogs: map[string]*CellLog{key: logWithRates(700, 1300, 800, 1200)},
		NewLogs: map[string]*CellLog{key: logWithRates(800, 1400, 900, 1300)},
	}
	m := metricOf(t, Compare([]Cell{old}, []Cell{new}, noisy).Cells[0], "acq/s")
	// Both runs: sd = √(260000/3) ≈ 294.39 over 4 seconds (worked by hand:
	// deviations ±300, ±200 from 1000); the band is twice the standard
	// error of the difference, 2·√(294.39²/4 + 294.39²/4) ≈ 416.33.
	if !m.Noise || math.Abs(m.Band-416.33) > 1 {
		t.Errorf("runs swinging ±30%% a second: %+v, want noise with a band of twice the standard error", m)
	}
	// Two seconds a run are too few to estimate a spread: the plain
	// threshold decides, and tripling is no noise however the seconds swing.
	short := CompareOptions{
		OldLogs: map[string]*CellLog{key: logWithRates(500, 1500)},
		NewLogs: map[string]*CellLog{key: logWithRates(2000, 4600)},
	}
	tripled := new
	tripled.AcquiresPerS = 3300
	if m := metricOf(t, Compare([]Cell{old}, []Cell{tripled}, short).Cells[0], "acq/s"); m.Noise {
		t.Errorf("a 230%% change over two seconds called noise: %+v", m)
	}
	// One run's spread alone says nothing about the other's.
	oneSided := CompareOptions{OldLogs: noisy.OldLogs}
	if m := metricOf(t, Compare([]Cell{old}, []Cell{new}, oneSided).Cells[0], "acq/s"); m.Noise {
		t.Errorf("spread from one run only: %+v, want the plain threshold", m)
	}
}

func TestCompareDirs(t *testing.T) {
	t.Parallel()
	oldDir, newDir := t.TempDir(), t.TempDir()
	old := fixtureSummary()
	new := fixtureSummary()
	new.Cells = new.Cells[1:] // redis/hot/1 only in old
	new.Cells[0].AcquiresPerS *= 2
	writeFixtureDir(t, oldDir, old, true)
	writeFixtureDir(t, newDir, new, true)
	cmp, err := CompareDirs(oldDir, newDir, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Cells) != len(new.Cells) || !slices.Equal(cmp.OnlyOld, []string{old.Cells[0].Key()}) {
		t.Errorf("%d cells, only old %v", len(cmp.Cells), cmp.OnlyOld)
	}
	if m := metricOf(t, cmp.Cells[0], "acq/s"); m.Noise || !m.Better || m.Change != 1 {
		t.Errorf("doubled throughput: %+v", m)
	}
	if _, err := CompareDirs(oldDir, filepath.Join(newDir, "missing"), CompareOptions{}); err == nil {
		t.Error("CompareDirs with a missing directory succeeded")
	}
}

// Two merged runs of one plan differ in what their shards measured (the
// clock skew), which is no difference of plan; the plan hash is named only
// when no setting says how the plans differ.
func TestMetaDifferencesLeaveMeasuredSkewOut(t *testing.T) {
	meta := func(hash string, renew bool, offsetUs float64) result.Meta {
		m := result.Meta{Impls: []string{"redis"}, Clients: []int{4}, PlanHash: hash, Renew: renew}
		for i := range 2 {
			m.Shards = append(m.Shards, result.ShardMeta{Index: i, Count: 2, RunID: "r",
				Skew: &result.Skew{OffsetUs: offsetUs * float64(i), BoundUs: offsetUs, Samples: 8}})
		}
		return readBack(t, m)
	}
	if d := MetaDifferences(meta("a", false, 12), meta("a", false, 30)); len(d) != 0 {
		t.Errorf("one plan merged twice: %q; want no difference", d)
	}
	d := MetaDifferences(meta("a", false, 12), meta("b", true, 30))
	if len(d) != 1 || !strings.Contains(d[0], "renew") {
		t.Errorf("a run without and with --renew: %q; want the one line naming renew", d)
	}
	if d := MetaDifferences(meta("a", false, 12), meta("b", false, 12)); len(d) != 1 || !strings.Contains(d[0], "plan_hash a → b") {
		t.Errorf("hashes differing with nothing else to say how: %q; want the hash named", d)
	}
}

// Bursts are compared by their cost per hand-off too: a herd that came
// back (wake-ups per hand-off up) and a server that works harder per
// hand-off are regressions.
func TestCompareHandoffCosts(t *testing.T) {
	burst := func(wakes int64, serverCPU float64) Cell {
		per := serverCPU * 1e6 / 21 // µs per hand-off: 3 repeats of 7
		return Cell{Impl: "zk-pred", Scenario: "burst", Kind: result.KindBurst, Clients: 8, Locks: 1, Acquires: 24, Repeats: 3,
			AcquiresPerS: 100, AcquireLatencyUs: result.Latency{P50: 1000, P99: 2000},
			Counts:            result.Counts{ReleaseWakeups: 3 * wakes},
			RepeatServerCPUUs: []float64{per * 0.98, per, per * 1.02},
			Generator:         &result.Generator{CPUSeconds: 0.01, ServerCPUSeconds: map[string]float64{"zk": serverCPU}}}
	}
	cmp := Compare([]Cell{burst(7, 0.021)}, []Cell{burst(28, 0.063)}, CompareOptions{})
	var names []string
	for _, m := range cmp.Cells[0].Metrics {
		names = append(names, m.Name)
	}
	if len(cmp.Regressions) != 2 || !strings.Contains(strings.Join(cmp.Regressions, "\n"), "wake-ups/hand-off 1.00 → 4.00") ||
		!strings.Contains(strings.Join(cmp.Regressions, "\n"), "server CPU/hand-off 1.00ms → 3.00ms") {
		t.Errorf("regressions %q (metrics %v), want wake-ups and server CPU per hand-off", cmp.Regressions, names)
	}
	if cmp := Compare([]Cell{burst(7, 0.021)}, []Cell{burst(7, 0.021)}, CompareOptions{}); len(cmp.Regressions) != 0 {
		t.Errorf("the same burst regressed: %q", cmp.Regressions)
	}
	// Within the repeats' spread (±2 %), 3 % more server CPU is noise even
	// where --noise would not say so.
	if cmp := Compare([]Cell{burst(7, 0.021)}, []Cell{burst(7, 0.021*1.03)}, CompareOptions{Noise: 0.01}); len(cmp.Regressions) != 0 {
		t.Errorf("a change within the repeats' spread regressed: %q", cmp.Regressions)
	}
	// A single burst a side says nothing of its spread: no CPU verdict.
	one := burst(7, 0.021)
	one.RepeatServerCPUUs = nil
	for _, m := range Compare([]Cell{one}, []Cell{one}, CompareOptions{}).Cells[0].Metrics {
		if m.Name == "server CPU/hand-off" {
			t.Error("server CPU judged without repeats")
		}
	}
}

// The disk and the warm-up are measured before the cells, not set: two
// runs of one plan differ in them every time, and only a disk that moved
// by more than 2× is worth a line.
func TestMetaDifferencesLeaveTheMeasuredDiskAndWarmupOut(t *testing.T) {
	meta := func(dir string, p99 float64, rates []float64) result.Meta {
		m := result.Meta{Impls: []string{"redis"}, Clients: []int{4}, PlanHash: "a",
			DiskSync:     &result.DiskSync{Dir: dir, Bytes: 2300, Count: 500, P50Ms: p99 / 3, P99Ms: p99, MaxMs: 2 * p99},
			ServerWarmup: []result.ServerWarmup{{Kind: "redis", Impl: "redis", Clients: 8, RatesPerS: rates, Steady: true}}}
		return readBack(t, m)
	}
	if d := MetaDifferences(meta("/tmp/a", 1.5, []float64{9000, 9100}), meta("/tmp/b", 2.8, []float64{9300, 9200})); len(d) != 0 {
		t.Errorf("one plan run twice: %q; want no difference", d)
	}
	d := MetaDifferences(meta("/tmp/a", 1.5, nil), meta("/tmp/b", 12, nil))
	if len(d) != 1 || d[0] != "disk differs: fdatasync p99 1.50ms → 12.0ms" {
		t.Errorf("a disk 8× slower: %q; want one line naming it", d)
	}
}

// readBack is m as meta.json gives it back: written, then read.
func readBack(t *testing.T, m result.Meta) result.Meta {
	t.Helper()
	b, _ := json.Marshal(m)
	path := filepath.Join(t.TempDir(), result.MetaFile)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := result.ReadMeta(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
