package report

import (
	"github.com/lockbench/lockbench/result"

	"strings"
	"testing"
	"time"
)

func pauseCell(impl string, violations int64) Cell {
	return Cell{Impl: impl, Scenario: "pause", Kind: result.KindFault, Clients: 2, Acquires: 6, SafetyViolations: violations,
		Faults: &result.Faults{Repeats: 3, ConfiguredMs: 2000, StaleWritesRejected: 3,
			RecoveryMs: &result.Spread{Count: 3, P50: 2100, Max: 2300},
			Pause:      &result.PauseFigures{StaleWrites: 3, UnfencedAccepted: 3, LockFences: true}}}
}

func TestVerdict(t *testing.T) {
	t.Parallel()
	bursts := func() []Cell {
		var out []Cell
		for _, c := range fixtureCells() {
			if c.Scenario == "burst" {
				out = append(out, c)
			}
		}
		return out
	}
	offTheory := bursts()
	offTheory[3].ReleaseWakeups = 150 // zk-naive at 16: theory 120
	// A burst's count is exact: one wake-up off is off, not within 5%.
	offByOne := bursts()
	offByOne[3].ReleaseWakeups = 121
	// A release wake-up counter that reads 0 is broken, even when the
	// other wake-ups happen to match theory: no fallback hides it.
	brokenCounter := bursts()
	brokenCounter[3].ReleaseWakeups, brokenCounter[3].Wakeups = 0, 120
	// An abandon cell is a burst by kind; its wake-ups follow no burst
	// curve and must neither be judged nor replace the burst's figure.
	abandon := append(bursts(), Cell{Impl: "zk-pred", Scenario: "abandon", Kind: result.KindBurst, Clients: 64, Locks: 1,
		Acquires: 32, Theory: &result.WatchPredecessor, Counts: result.Counts{ReleaseWakeups: 7}, Abandon: &result.Abandon{Count: 32, Granted: []int{0, 2, 4}}})
	// A lock whose waiters queue on the server wakes nobody: judged on
	// its own, it leaves the watchers' ratio alone.
	serverQueue := result.Theory{Waiters: "queued on the server", Formula: "0", PerHandoffFormula: "0"}
	quiet := append(bursts(), Cell{Impl: "db-queue", Scenario: "burst", Kind: result.KindBurst, Clients: 16, Locks: 1,
		Acquires: 16, Theory: &serverQueue})
	noisy := append(bursts(), Cell{Impl: "db-queue", Scenario: "burst", Kind: result.KindBurst, Clients: 16, Locks: 1,
		Acquires: 16, Theory: &serverQueue, Counts: result.Counts{Notifications: 3}})
	unsafe := fixtureCells()
	unsafe[12].SafetyViolations = 2
	ms := func(d time.Duration) *SLO { return &SLO{Quantile: "p99", Limit: d} }

	for _, tc := range []struct {
		name  string
		cells []Cell
		slo   *SLO
		// want maps a question to text its answer must hold; absent
		// lists questions that must have no line.
		want   map[string][]string
		absent []string
		bad    []string
	}{
		{name: "fixture", cells: fixtureCells(), want: map[string][]string{
			"Safety": {"✓ 0 violations in"},
			"Herd cost": {"zk-naive | 16 | 8.00 | 8.00 (n(n−1)/2) ✓", "zk-pred | 16 | 1.00 | 1.00 (n−1) ✓",
				"server fired 136 watches", "zk-naive wakes 8× as many waiters per hand-off as zk-pred",
				"| —; — |"},
			"Best client count tried (hot)": {"p99 ≤ 10ms (default", "redis | ≥ 16 | 11,500", "zk-naive | 4 | 2,100",
				"zk-pred | 4 | 2,300", "redis serves most", "lockbench capacity"},
			"Throughput": {"zk-naive | hot | 2,500 | 1 client | 1.01ms | 15.20 notifications at 16 | — | 2"},
		}, absent: []string{"Best client count tried (burst)", "Open loop", "Fault cost"}},
		{name: "own SLO", cells: fixtureCells(), slo: ms(time.Millisecond), want: map[string][]string{
			"Best client count tried (hot)": {"at p99 ≤ 1ms, among", "redis | 1 | 9,000", "zk-naive | none | — | — | 1.01ms", "zk-pred | 1 | 2,400"},
		}},
		{name: "no SLO met", cells: fixtureCells(), slo: ms(100 * time.Microsecond), want: map[string][]string{
			"Best client count tried (hot)": {"no implementation met it"},
		}, bad: []string{"Best client count tried (hot)"}},
		{name: "off theory", cells: offTheory, want: map[string][]string{
			"Herd cost": {"zk-naive | 16 | 10.00 | 8.00 (n(n−1)/2) ✗ (measured +30, +25.0%)"},
		}, absent: []string{"Best client count tried (burst)"}},
		{name: "one off theory", cells: offByOne, want: map[string][]string{
			"Herd cost": {"zk-naive | 16 | 8.07 | 8.00 (n(n−1)/2) ✗ (measured +1, +0.8%)"},
		}},
		{name: "release counter broken", cells: brokenCounter, want: map[string][]string{
			"Herd cost": {"zk-naive | 16 | 0.00 | 8.00 (n(n−1)/2) ✗ (measured -120, -100.0%)"},
		}},
		{name: "abandon", cells: abandon, want: map[string][]string{
			"Herd cost": {"zk-pred | 16 | 1.00 | 1.00 (n−1) ✓"},
		}, absent: []string{"Best client count tried (burst)"}},
		{name: "server queue", cells: quiet, want: map[string][]string{
			"Herd cost": {"db-queue | 16 | 0.00 | 0.00 (0) ✓", "zk-naive wakes 8× as many waiters per hand-off as zk-pred"},
		}},
		{name: "server queue notified", cells: noisy, want: map[string][]string{
			"Herd cost": {"db-queue | 16 | 0.00 | 0.00 (0) ✗ (measured 3)"},
		}},
		{name: "unsafe", cells: unsafe, want: map[string][]string{
			"Safety": {"UNSAFE — 2 violations in", "zk-pred hot at 16 clients (2)"},
		}, bad: []string{"Safety"}},
		{name: "pause fenced", cells: []Cell{pauseCell("zk-pred", 0)}, want: map[string][]string{
			"Safety":     {"✓ 0 violations in 6 grants; 3 stale grants, fenced (zk-pred pause)"},
			"Fault cost": {"zk-pred | pause | 2.10s | 2.30s | bound 2.00s | 3 stale grants, fenced"},
		}, absent: []string{"Herd cost"}},
		{name: "connection lock", cells: []Cell{
			{Impl: "db", Scenario: "crash", Kind: result.KindFault, Clients: 3, Acquires: 8,
				Faults: &result.Faults{Repeats: 2, RecoveryMs: &result.Spread{Count: 2, P50: 1.5, Max: 2},
					ConnCrash: &result.ConnCrashFigures{SilentWaitMs: 8000,
						Silent: result.ConnEnd{Recovered: 1, Unfreed: 1, RecoveryMs: &result.Spread{Count: 1, P50: 3000, Max: 3000}}}}},
			{Impl: "db", Scenario: "pause", Kind: result.KindFault, Clients: 3, Acquires: 6,
				Faults: &result.Faults{Repeats: 2, ConfiguredMs: 2000, RecoveryMs: &result.Spread{Count: 2, P50: 2010, Max: 2020},
					ConnPause: &result.ConnPauseFigures{PauseMs: 2000}}},
		}, want: map[string][]string{
			"Fault cost": {"db | crash | 1.50ms | 2.00ms | — | ✓ safe; a silent holder freed 3.00s p50 after it fell silent in 1 of 2 repeats; a silent holder never freed within 8.00s in 1 of 2 repeats",
				"db | pause | 2.01s | 2.02s | pause 2.00s | ✓ safe"},
		}},
		{name: "pause unfenced", cells: []Cell{pauseCell("redis", 3)}, want: map[string][]string{
			"Safety":     {"UNSAFE — 3 violations in 6 grants"},
			"Fault cost": {"UNSAFE under a fault", "redis | pause | 2.10s | 2.30s | bound 2.00s | UNSAFE — 3 violations (stale writes accepted)"},
		}, bad: []string{"Safety", "Fault cost"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]VerdictLine{}
			for _, v := range Verdict(derived(tc.cells), tc.slo) {
				got[v.Question] = v
				if v.Anchor == "" {
					t.Errorf("%s: no anchor to its evidence", v.Question)
				}
			}
			for q, texts := range tc.want {
				v, ok := got[q]
				if !ok {
					t.Errorf("no %q line; got %v", q, got)
					continue
				}
				text := v.Answer + tableText(v.Table)
				for _, s := range texts {
					if !strings.Contains(text, s) {
						t.Errorf("%s: %q lacks %q", q, text, s)
					}
				}
			}
			for _, q := range tc.absent {
				if v, ok := got[q]; ok {
					t.Errorf("%q line without data for it: %q", q, v.Answer)
				}
			}
			for q, v := range got {
				want := false
				for _, b := range tc.bad {
					want = want || b == q
				}
				if v.Bad != want {
					t.Errorf("%s: bad = %v, want %v (%q)", q, v.Bad, want, v.Answer)
				}
			}
		})
	}
	for _, v := range Verdict(derived(abandon), nil) {
		if v.Question == "Herd cost" && (strings.Contains(v.Answer, "64 clients") || strings.Contains(v.Answer, "✗")) {
			t.Errorf("the abandon cell is judged by burst theory: %q", v.Answer)
		}
	}
	if v := Verdict(nil, nil); v != nil {
		t.Errorf("verdict of no cells: %v", v)
	}
}

func TestOpenLoopVerdictSaturation(t *testing.T) {
	t.Parallel()
	cells := browserFixture().Cells
	var v VerdictLine
	for _, l := range Verdict(derived(cells), nil) {
		if l.Question == "Open loop" {
			v = l
		}
	}
	want := "zk-pred | 16 | 1,000 | 600 | 1,200 (40.0%) | 4.00ms | 2.50ms | ✗ saturated"
	if !strings.Contains(tableText(v.Table), want) || !v.Bad || v.Anchor != anchorOpen {
		t.Log(tableText(v.Table))
		t.Errorf("open loop verdict %+v, want %q, bad", v, want)
	}
	for i := range cells {
		if cells[i].Scenario == "rate" {
			cells[i].Open.Dropped = 0
			cells[i].AcquiresPerS = 990
		}
	}
	for _, l := range Verdict(derived(cells), nil) {
		if l.Question == "Open loop" && (l.Bad || !strings.Contains(l.Answer, "every lock kept up") || !strings.Contains(tableText(l.Table), "| ✓")) {
			t.Errorf("open loop that kept up: %+v", l)
		}
	}
}

func TestRenderHTMLVerdictAndLabels(t *testing.T) {
	t.Parallel()
	dir, _ := renderFixture(t, browserFixture(), true, RenderOptions{})
	page := string(readFile(t, dir+"/"+HTMLFile))
	for _, want := range []string{`id="verdict"`, `href="#capacity"`, `id="capacity"`, `href="#fig-burst-costs"`,
		`id="fig-burst-costs"`, `id="open-loop"`, "from intended start", "service", `id="faults"`,
		"stale grant, fenced ×3", "<th class=\"n\">p95</th>", "<th class=\"n\">p99.99</th>", "12.0ms"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// The pause's stale grant was fenced: nothing on the page calls it unsafe.
	for _, bad := range []string{"UNSAFE", "Mutual exclusion was violated"} {
		if strings.Contains(page, bad) {
			t.Errorf("report.html says %q of a fenced stale grant", bad)
		}
	}
	sum := browserFixture()
	sum.Cells[len(sum.Cells)-1].SafetyViolations = 3 // the pause, unfenced
	dir, _ = renderFixture(t, sum, true, RenderOptions{})
	page = string(readFile(t, dir+"/"+HTMLFile))
	for _, want := range []string{"⚠ UNSAFE", "UNSAFE: 3", "UNSAFE: 3 of 3 accepted", "Mutual exclusion was violated"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html of an accepted stale write lacks %q", want)
		}
	}
}

// The verdict says which side was the limit from the CPU lockbench and
// the sandboxed servers used: the machine's cores when together they kept
// them busy, lockbench (marked bad: the figures measure it) or the server
// when one ran near a core's worth, else neither; without the servers'
// CPU it says nothing.
func TestLimitVerdict(t *testing.T) {
	t.Parallel()
	cell := func(impl string, clients int, lb, srv float64, cores int) Cell {
		return Cell{Impl: impl, Scenario: "burst", Kind: result.KindBurst, Clients: clients,
			Generator: &result.Generator{CPUSeconds: lb * 10, ServerCPUSeconds: map[string]float64{"127.0.0.1:2181": srv * 10}, ServerSpanS: 10, Cores: cores}}
	}
	limit := func(cells ...Cell) (VerdictLine, bool) {
		for _, v := range Verdict(derived(cells), nil) {
			if v.Question == "Limit" {
				return v, true
			}
		}
		return VerdictLine{}, false
	}
	for _, tc := range []struct {
		name  string
		cells []Cell
		want  string
		bad   bool
	}{
		{"cores", []Cell{cell("zk-naive", 2000, 1.05, 0.82, 2)}, "zk-naive burst ×2000: the machine's 2 cores, 94% busy (lockbench 105% of a core, server 82%)", false},
		{"lockbench", []Cell{cell("zk-naive", 2000, 0.9, 0.3, 4)}, "zk-naive burst ×2000: lockbench (lockbench 90% of a core, server 30%)", true},
		{"server", []Cell{cell("zk-pred", 64, 0.3, 0.95, 4)}, "zk-pred burst ×64: the server (lockbench 30% of a core, server 95%)", false},
		{"neither", []Cell{cell("zk-pred", 8, 0.3, 0.2, 2), cell("redis", 8, 0.1, 0.5, 2)}, "✓ neither side: lockbench used at most 30% of a core, the servers at most 50%, in 2 cells", false},
	} {
		v, ok := limit(tc.cells...)
		if !ok || v.Answer != tc.want || v.Bad != tc.bad || v.Anchor == "" {
			t.Errorf("%s: %+v (present %v), want %q bad %v", tc.name, v, ok, tc.want, tc.bad)
		}
	}
	// With two cores for its Go code, lockbench at 90% of one is not the
	// limit; of four cells the lockbench-limited one is named first, and
	// only three are named.
	twoProcs := cell("redis", 8, 0.9, 0.3, 4)
	twoProcs.Generator.Procs = 2
	if v, _ := limit(twoProcs); !strings.HasPrefix(v.Answer, "✓ neither side") || v.Bad {
		twoProcs.Generator.Procs = 0
		t.Errorf("lockbench at 90%% of one of its 2 cores: %+v", v)
	}
	many := []Cell{cell("zk-pred", 64, 0.3, 0.95, 4), cell("zk-pred", 128, 0.3, 0.97, 4), cell("zk-naive", 64, 0.3, 0.99, 4), cell("zk-naive", 128, 0.9, 0.3, 4)}
	if v, _ := limit(many...); !strings.HasPrefix(v.Answer, "zk-naive burst ×128: lockbench") || !v.Bad ||
		!strings.Contains(v.Answer, "zk-naive burst ×64: the server") || strings.Contains(v.Answer, "zk-pred burst ×64") || !strings.HasSuffix(v.Answer, "; and 1 more") {
		t.Errorf("four cells: %+v", v)
	}
	noServers := cell("redis", 8, 0.9, 0, 2)
	noServers.Generator.ServerCPUSeconds = nil
	if v, ok := limit(noServers); ok {
		t.Errorf("without the servers' CPU: %+v", v)
	}
}

// tableText is a verdict's table as text, a line per row, cells joined by
// " | ".
func tableText(t *VerdictTable) string {
	if t == nil {
		return ""
	}
	var b strings.Builder
	for _, r := range append([][]string{t.Header}, t.Rows...) {
		b.WriteString("\n" + strings.Join(r, " | "))
	}
	return b.String()
}
