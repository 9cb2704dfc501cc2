package judge

import (
	"testing"

	"github.com/lockbench/lockbench/result"
)

func derived(cells ...result.Cell) []result.Cell {
	for i := range cells {
		cells[i].Derive()
	}
	return cells
}

func burst(impl string, n int, t *result.Theory, releaseWakeups int64, serverCPUS float64) result.Cell {
	return result.Cell{Impl: impl, Scenario: "burst", Kind: result.KindBurst, Clients: n, Locks: 1, Acquires: int64(n),
		Theory: t, Counts: result.Counts{ReleaseWakeups: releaseWakeups},
		Generator: &result.Generator{CPUSeconds: 0.01, ServerCPUSeconds: map[string]float64{"127.0.0.1:1": serverCPUS}, ServerSpanS: 0.5}}
}

// A burst's wake-ups are judged exactly against theory, the dearest and
// cheapest are named by server CPU per hand-off, and an exponent of n is
// given only with its interval: three client counts, not two.
func TestHerd(t *testing.T) {
	t.Parallel()
	cells := derived(
		burst("naive", 8, &result.WatchAll, 28, 0.07), burst("naive", 32, &result.WatchAll, 496, 1.24),
		burst("pred", 8, &result.WatchPredecessor, 7, 0.007), burst("pred", 32, &result.WatchPredecessor, 31, 0.031),
		burst("pred", 128, &result.WatchPredecessor, 128, 0.127))
	h := Judge(cells, nil).Herd
	if h == nil || len(h.Rows) != 2 {
		t.Fatalf("herd %+v", h)
	}
	naive, pred := h.Rows[0], h.Rows[1]
	if naive.Clients != 32 || !naive.Theory.Exact || naive.Theory.Want != 496 {
		t.Errorf("naive at its largest burst: %+v %+v", naive.CellRef, naive.Theory)
	}
	if pred.Clients != 128 || pred.Theory.Exact || pred.Theory.Got != 128 || pred.Theory.Want != 127 {
		t.Errorf("pred one off theory must not be exact: %+v", pred.Theory)
	}
	if h.Rows[h.Dearest].Impl != "naive" || h.Rows[h.Cheapest].Impl != "pred" || *naive.TimesCheapest < 30 {
		t.Errorf("dearest %d cheapest %d, × %v", h.Dearest, h.Cheapest, *naive.TimesCheapest)
	}
	if naive.GrowthWakeups != nil || naive.GrowthCPU != nil {
		t.Error("an exponent from two client counts has no interval and must not be given")
	}
	if g := pred.GrowthWakeups; g == nil || g.Exponent < -0.1 || g.Exponent > 0.1 || !(g.Low <= g.Exponent && g.Exponent <= g.High) {
		t.Errorf("pred's wake-ups per hand-off do not grow with n: %+v", g)
	}
	if g := pred.GrowthCPU; g == nil || g.Exponent < -0.1 || g.Exponent > 0.1 {
		t.Errorf("pred's server CPU per hand-off, made flat: %+v", g)
	}
	if h.Ratio == nil || h.Ratio.Hi != "naive" || h.Ratio.Lo != "pred" {
		t.Errorf("ratio %+v", h.Ratio)
	}
}

// A cell's limit is read from its derived CPU shares: lockbench at its
// usable cores, a server at a core, the machine at 90 % of its cores.
func TestCellLimit(t *testing.T) {
	t.Parallel()
	cell := func(lockbench, server float64, procs int) result.Cell {
		c := result.Cell{Generator: &result.Generator{CPUSeconds: lockbench, ServerCPUSeconds: map[string]float64{"a": server},
			ServerSpanS: 1, Cores: 2, Procs: procs}}
		c.Derive()
		return c
	}
	for _, tc := range []struct {
		name              string
		lockbench, server float64
		procs             int
		want              Side
	}{
		{"idle", 0.3, 0.3, 2, SideNone},
		{"server", 0.3, 0.85, 2, SideServer},
		{"lockbench on one thread", 0.85, 0.5, 1, SideLockbench},
		{"lockbench on two threads is not at its limit", 0.85, 0.5, 2, SideNone},
		{"machine", 0.95, 0.9, 2, SideMachine},
	} {
		if got := CellLimit(cell(tc.lockbench, tc.server, tc.procs)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if CellLimit(result.Cell{Generator: &result.Generator{CPUSeconds: 5, ServerSpanS: 0.5}}) != SideNone {
		t.Error("a cell under a second has no CPU shares to judge")
	}
}

// The gap names each lock at its most clients; the slowest p90 against
// the fastest only from GapRatioShown.
func TestGap(t *testing.T) {
	t.Parallel()
	gap := func(impl string, clients int, p90 float64) result.Cell {
		return result.Cell{Impl: impl, Scenario: "hot", Clients: clients, HandoffGapUs: &result.Latency{P50: p90 / 2, P90: p90}}
	}
	g := Judge([]result.Cell{gap("a", 8, 100), gap("a", 32, 200), gap("b", 32, 500), gap("c", 1, 9999)}, nil).Gap
	if len(g.Rows) != 2 || g.Rows[0].Clients != 32 || g.Rows[g.Slow].Impl != "b" || g.Times != 0 {
		t.Errorf("gap %+v", g)
	}
	g = Judge([]result.Cell{gap("a", 8, 100), gap("b", 8, 300)}, nil).Gap
	if g.Times != 3 {
		t.Errorf("3× is named: %+v", g)
	}
}

// The best client count tried is judged on loops alone, marks a best at
// the largest count tried, and names the lock that served most.
func TestBestTried(t *testing.T) {
	t.Parallel()
	loop := func(impl string, n int, perS, p99 float64) result.Cell {
		return result.Cell{Impl: impl, Scenario: "hot", Kind: result.KindClosed, Clients: n, Acquires: 100, AcquiresPerS: perS,
			AcquireLatencyUs: result.Latency{P99: p99}}
	}
	cells := []result.Cell{loop("a", 1, 100, 1000), loop("a", 8, 400, 5000), loop("b", 1, 200, 900), loop("b", 8, 900, 20000),
		{Impl: "b", Scenario: "burst", Kind: result.KindBurst, Clients: 8, Acquires: 8}}
	bs := Judge(cells, nil).BestTried
	if len(bs) != 1 || bs[0].Scenario != "hot" {
		t.Fatalf("best tried %+v", bs)
	}
	b := bs[0]
	if !b.Rows[0].AtLargest || b.Rows[1].AtLargest || b.Rows[1].Clients != 1 || b.Rows[b.Best].Impl != "a" {
		t.Errorf("rows %+v best %d", b.Rows, b.Best)
	}
	strict := result.SLO{Quantile: "p99", Limit: 1}
	if !Judge(cells, &strict).BestTried[0].NoneMet() {
		t.Error("nobody meets 1ns")
	}
}

// Faults: a violation is bad; a stale write the token turned away is
// fenced, counted in Safety, and not bad.
func TestFaultsAndFencing(t *testing.T) {
	t.Parallel()
	pause := func(impl string, violations int64) result.Cell {
		return result.Cell{Impl: impl, Scenario: "pause", Kind: result.KindFault, Clients: 2, Acquires: 6, SafetyViolations: violations,
			Faults: &result.Faults{Repeats: 3, StaleWritesRejected: 3, Pause: &result.PauseFigures{StaleWrites: 3}}}
	}
	f := Judge([]result.Cell{pause("fenced", 0), pause("unfenced", 2)}, nil)
	if len(f.Faults) != 2 || f.Faults[0].Bad() || f.Faults[0].Fenced != 3 || !f.Faults[1].Bad() || f.Faults[1].Fenced != 0 {
		t.Errorf("faults %+v", f.Faults)
	}
	if !f.Safety.Bad() || f.Safety.Violations != 2 || f.Safety.Fenced != 3 || len(f.Safety.FencedBy) != 1 {
		t.Errorf("safety %+v", f.Safety)
	}
}

// Lost updates of the guarded counter make a run unsafe, counted on the
// counter the lock's users would write: the fenced one for a lock with
// tokens of its own (whose unfenced losses only show what fencing saved),
// the unfenced one for a lock without.
func TestLostUpdatesAreUnsafe(t *testing.T) {
	t.Parallel()
	cell := func(impl string, tokens result.TokenSource, fenced, unfenced int64) result.Cell {
		return result.Cell{Impl: impl, Scenario: "pause", Clients: 2, Acquires: 4, Safety: &result.Safety{Guarded: true, Tokens: tokens, GuardCounts: result.GuardCounts{LostUpdatesFenced: fenced, LostUpdates: unfenced}}}
	}
	s := Judge([]result.Cell{cell("zk-pred", result.TokensLock, 0, 3), cell("etcd", result.TokensLock, 0, 0)}, nil).Safety
	if s.Bad() || len(s.LostUpdates) != 0 {
		t.Errorf("fenced locks losing only unfenced updates judged unsafe: %+v", s)
	}
	s = Judge([]result.Cell{cell("redis", result.TokensCounter, 0, 2), cell("zk-pred", result.TokensLock, 1, 5),
		cell("redis-fenced", result.TokensLock, 0, 7)}, nil).Safety
	if !s.Bad() || s.Violations != 0 || s.Lost() != 3 || len(s.LostUpdates) != 2 ||
		s.LostUpdates[0].Impl != "redis" || s.LostUpdates[1].Impl != "zk-pred" {
		t.Errorf("lost updates: %+v, want redis (2) and zk-pred (1), bad", s.LostUpdates)
	}
}

// A change within noise, or twice the rounds' standard error, is noise;
// beyond it, the direction decides better or worse.
func TestJudgeChange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		old, new, sd     float64
		higherBetter     bool
		noise, regressed bool
	}{
		{"within 5%", 1000, 1040, 0, true, true, false},
		{"throughput down 10%", 1000, 900, 0, true, false, true},
		{"latency down 10%", 1000, 900, 0, false, false, false},
		{"latency up 10%, rounds spread 60", 1000, 1100, 60, false, true, false},
		{"latency up 10%, rounds spread 40", 1000, 1100, 40, false, false, true},
	} {
		c := JudgeChange(tc.old, tc.new, tc.higherBetter, 0, tc.sd)
		if c.Noise != tc.noise || c.Regressed() != tc.regressed {
			t.Errorf("%s: %+v, want noise %v regressed %v", tc.name, c, tc.noise, tc.regressed)
		}
	}
}
