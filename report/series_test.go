package report

import (
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"

	"math"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/plot/plotter"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestNinesAxis(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		q, x float64
	}{{0, 1}, {0.5, 2}, {0.9, 10}, {0.99, 100}, {0.999, 1000}, {0.9999, 10000}} {
		if got := ninesX(tc.q); !near(got, tc.x) {
			t.Errorf("ninesX(%v) = %v, want %v", tc.q, got, tc.x)
		}
	}
	for _, tc := range []struct {
		maxX   float64
		top    float64
		labels map[float64]string
	}{
		{5, 10, map[float64]string{1: "0%", 10: "90%"}},
		{16, 100, map[float64]string{1: "0%", 10: "90%", 100: "99%"}},
		{1000, 1000, map[float64]string{1: "0%", 10: "90%", 100: "99%", 1000: "99.9%"}},
		{54321, 1e5, map[float64]string{1e4: "99.99%", 1e5: "99.999%"}},
	} {
		if got := ninesMax(tc.maxX); !near(got, tc.top) {
			t.Errorf("ninesMax(%v) = %v, want %v", tc.maxX, got, tc.top)
		}
		ticks := ninesTicks(tc.maxX)
		got := map[float64]string{}
		for _, tk := range ticks {
			if tk.Label != "" {
				got[math.Round(tk.Value)] = tk.Label
			}
			if tk.Value > tc.top*(1+1e-9) {
				t.Errorf("ninesTicks(%v): tick %v beyond the axis end %v", tc.maxX, tk.Value, tc.top)
			}
		}
		for x, want := range tc.labels {
			if got[x] != want {
				t.Errorf("ninesTicks(%v): label at %v = %q, want %q", tc.maxX, x, got[x], want)
			}
		}
	}
}

func TestSpectrumSeries(t *testing.T) {
	t.Parallel()
	h := result.NewHistogram()
	for v := int64(1); v <= 10000; v++ {
		h.RecordValue(v)
	}
	xys := spectrumSeries(Cell{}, h)
	if len(xys) < 10 {
		t.Fatalf("%d points, want a spectrum", len(xys))
	}
	if xys[0].X != 1 {
		t.Errorf("spectrum starts at x=%v, want 1 (0%%)", xys[0].X)
	}
	for i := 1; i < len(xys); i++ {
		if xys[i].X <= xys[i-1].X || xys[i].Y < xys[i-1].Y {
			t.Fatalf("point %d %v does not follow %v", i, xys[i], xys[i-1])
		}
	}
	last := xys[len(xys)-1]
	if last.X != 10000 || math.Abs(last.Y-10) > 0.01 {
		t.Errorf("last point %v, want the max (10 ms) at x = count (10000)", last)
	}
	// The median sits at x = 2 and is 5 ms, give or take the bucket.
	for _, p := range xys {
		if p.X >= 2 {
			if math.Abs(p.Y-5) > 0.1 {
				t.Errorf("at x=%v (≈p50) latency %v ms, want ≈5", p.X, p.Y)
			}
			break
		}
	}

	c := Cell{Acquires: 5000, AcquireLatencyUs: Latency{P50: 100, P90: 200, P99: 400, P999: 800, Max: 1600}}
	want := plotter.XYs{{X: 2, Y: 0.1}, {X: 10, Y: 0.2}, {X: 100, Y: 0.4}, {X: 1000, Y: 0.8}, {X: 5000, Y: 1.6}}
	got := spectrumSeries(c, nil)
	if len(got) != len(want) {
		t.Fatalf("fallback spectrum %v, want %v", got, want)
	}
	for i := range want {
		if !near(got[i].X, want[i].X) || !near(got[i].Y, want[i].Y) {
			t.Errorf("fallback point %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func findSeries(t *testing.T, ss []series, label string) series {
	t.Helper()
	for _, s := range ss {
		if s.Label == label {
			return s
		}
	}
	var labels []string
	for _, s := range ss {
		labels = append(labels, s.Label)
	}
	t.Fatalf("no series %q in %q", label, labels)
	return series{}
}

func assertXYs(t *testing.T, what string, got, want plotter.XYs) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
	for i := range want {
		if !near(got[i].X, want[i].X) || !near(got[i].Y, want[i].Y) {
			t.Errorf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestThroughputAndLatencySeries(t *testing.T) {
	t.Parallel()
	cells := fixtureCells()
	tp := throughputSeries(closedLoops(cells))
	if len(tp) != 3 {
		t.Errorf("%d throughput series, want 3 (one per implementation's closed loop)", len(tp))
	}
	assertXYs(t, "redis/hot throughput", findSeries(t, tp, "redis/hot").XYs, plotter.XYs{{X: 1, Y: 9000}, {X: 4, Y: 12000}, {X: 16, Y: 11500}})
	assertXYs(t, "zk-pred/burst p99", findSeries(t, p99Series(cells), "zk-pred/burst").XYs, plotter.XYs{{X: 4, Y: 4.5}, {X: 16, Y: 19}})
	pt := findSeries(t, p99ThroughputSeries(cells), "zk-naive/hot")
	assertXYs(t, "zk-naive/hot p99 vs throughput", pt.XYs, plotter.XYs{{X: 2500, Y: 1.01}, {X: 2100, Y: 5.2}, {X: 900, Y: 41}})
	if want := []string{"n=1", "n=4", "n=16"}; len(pt.PointLabels) != 3 || pt.PointLabels[2] != want[2] {
		t.Errorf("point labels %v, want %v", pt.PointLabels, want)
	}
}

func TestPerAcquireSeries(t *testing.T) {
	t.Parallel()
	measured, theory := perAcquireSeries(fixtureCells())
	// One client never waits: nothing to plot on a log axis at n=1.
	assertXYs(t, "zk-naive notifications", findSeries(t, measured, "zk-naive/hot notifications").XYs,
		plotter.XYs{{X: 4, Y: 3.1}, {X: 16, Y: 15.2}})
	assertXYs(t, "redis retries", findSeries(t, measured, "redis/hot retries").XYs,
		plotter.XYs{{X: 4, Y: 1.5}, {X: 16, Y: 6.25}})
	for _, s := range measured {
		if s.Scenario == "burst" {
			t.Errorf("burst series %q among closed loops", s.Label)
		}
	}
	all := findSeries(t, theory, "theory n−1 (all watch all)")
	pred := findSeries(t, theory, "theory 1 (predecessor watch)")
	for _, p := range all.XYs {
		if !near(p.Y, p.X-1) {
			t.Errorf("n−1 line has %v", p)
		}
	}
	for _, p := range pred.XYs {
		if p.Y != 1 {
			t.Errorf("predecessor line has %v", p)
		}
	}
	if all.XYs[0].X != 4 || all.XYs[len(all.XYs)-1].X != 16 {
		t.Errorf("theory spans %v…%v, want the measured 4…16", all.XYs[0].X, all.XYs[len(all.XYs)-1].X)
	}

	// Only polling: no theory about notifications.
	if _, theory := perAcquireSeries(fixtureCells()[:3]); len(theory) != 0 {
		t.Errorf("theory %v drawn for a polling implementation alone", theory)
	}
}

// A burst's cost per hand-off: a total over the cell's n−1 hand-offs
// (zk-naive's 120 wake-ups at 16 clients are 8 per hand-off), theory
// per hand-off beside it, and a server CPU and a gap line only where the
// cells measured them.
func TestBurstCostSeries(t *testing.T) {
	t.Parallel()
	cells := fixtureCells()
	for i := range cells {
		if cells[i].Impl == "zk-naive" && cells[i].Scenario == "burst" {
			cells[i].Generator = &result.Generator{CPUSeconds: 0.1, ServerCPUSeconds: map[string]float64{"zk": 0.003 * float64(cells[i].Clients-1)}}
			cells[i].HandoffGapUs = &result.Latency{P50: 250}
		}
	}
	wakes, cpu, gap, theory := burstCostSeries(derived(cells))
	if len(wakes) != 2 {
		t.Fatalf("%d wake-up series, want zk-naive and zk-pred (redis polls: no wake-ups)", len(wakes))
	}
	assertXYs(t, "zk-naive", findSeries(t, wakes, "zk-naive").XYs, plotter.XYs{{X: 4, Y: 2}, {X: 16, Y: 8}})
	assertXYs(t, "zk-pred", findSeries(t, wakes, "zk-pred").XYs, plotter.XYs{{X: 4, Y: 1}, {X: 16, Y: 1}})
	if len(cpu) != 1 || len(gap) != 1 {
		t.Fatalf("server CPU %v, gap %v: want zk-naive's alone", cpu, gap)
	}
	assertXYs(t, "zk-naive CPU", cpu[0].XYs, plotter.XYs{{X: 4, Y: 3000}, {X: 16, Y: 3000}})
	assertXYs(t, "zk-naive gap", gap[0].XYs, plotter.XYs{{X: 4, Y: 250}, {X: 16, Y: 250}})
	half := findSeries(t, theory, "theory n(n−1)/2 over n−1 hand-offs")
	one := findSeries(t, theory, "theory n−1 over n−1 hand-offs")
	for _, p := range half.XYs {
		if !near(p.Y, p.X/2) {
			t.Errorf("n/2 line has %v", p)
		}
	}
	for _, p := range one.XYs {
		if p.Y != 1 {
			t.Errorf("predecessor line has %v", p)
		}
	}
	if w, _, _, th := burstCostSeries(derived(fixtureCells()[:5])); w != nil || th != nil {
		t.Errorf("burst series %v %v for redis alone, which has no wake-ups", w, th)
	}
}

func TestTimelineSeries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cells := fixtureCells()
	writeFixtureDir(t, dir, &Summary{Cells: cells}, true)
	r, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	perS, p99, stairs := timelineSeries(cells, r.logs, false)
	if len(stairs) != 0 {
		t.Errorf("stair marks %v without a ramp", stairs)
	}
	if len(perS["burst"]) != 0 {
		t.Errorf("burst timeline %v from single intervals", perS["burst"])
	}
	s := findSeries(t, perS["hot"], "redis (16 clients)")
	// The fixture's cells last 3 s: three full intervals, each a tenth of
	// the cell's rate.
	if len(s.XYs) != 3 {
		t.Fatalf("redis timeline %v, want 3 intervals", s.XYs)
	}
	for i, p := range s.XYs {
		if !near(p.X, float64(i)+0.5) || !near(p.Y, 1150) {
			t.Errorf("interval %d = %v, want (%v, 1150)", i, p, float64(i)+0.5)
		}
	}
	if len(findSeries(t, p99["hot"], "redis (16 clients)").XYs) != 3 {
		t.Error("p99 timeline lacks intervals")
	}
}

func TestTimelineSeriesRamp(t *testing.T) {
	t.Parallel()
	// A ramp's stairs are the cells of one implementation and scenario:
	// every stair is on the line, each after the one before, and marked.
	dir := t.TempDir()
	cells := fixtureCells()[:3] // redis hot at 1, 4, 16 clients, 3 s each
	writeFixtureDir(t, dir, &Summary{Cells: cells}, true)
	r, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	perS, p99, stairs := timelineSeries(cells, r.logs, true)
	s := findSeries(t, perS["hot"], "redis (ramp 1→16 clients)")
	if len(s.XYs) != 9 {
		t.Fatalf("ramp timeline has %d points, want 3 stairs × 3 intervals: %v", len(s.XYs), s.XYs)
	}
	for i, want := range []float64{900, 900, 900, 1200, 1200, 1200, 1150, 1150, 1150} {
		if p := s.XYs[i]; !near(p.X, float64(i)+0.5) || !near(p.Y, want) {
			t.Errorf("point %d = %v, want (%v, %v)", i, p, float64(i)+0.5, want)
		}
	}
	want := []stairMark{{0, 1}, {3, 4}, {6, 16}}
	if !slices.Equal(stairs["hot"], want) {
		t.Errorf("stair marks %v, want %v", stairs["hot"], want)
	}
	if n := len(findSeries(t, p99["hot"], "redis (ramp 1→16 clients)").XYs); n != 9 {
		t.Errorf("p99 ramp timeline has %d points, want 9", n)
	}
}

func TestIntervalStatsBaseTime(t *testing.T) {
	t.Parallel()
	// Whether the writer stamps intervals relative to a base time or in
	// absolute time, the reader must give the same timeline.
	dir := t.TempDir()
	ivs := []interval{
		{result.TagAcquire, 1000, []int64{10, 20, 30}}, {result.TagRelease, 1000, []int64{5}},
		{result.TagAcquire, 1000, []int64{10, 20}}, {result.TagRelease, 1000, []int64{5}},
		{result.TagAcquire, 1000, []int64{10}}, {result.TagRelease, 1000, []int64{5}},
		{result.TagAcquire, 200, []int64{10}}, // a stub at the end: left out
	}
	start := fixtureStart.UnixMilli()
	var got [2][]hlog.IntervalStat
	for i, rel := range []bool{false, true} {
		p := filepath.Join(dir, "x"+result.HlogExt)
		writeHlog(t, p, start, ivs, rel)
		l, err := hlog.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = l.IntervalStats(result.TagAcquire)
		if n := l.Merged(result.TagAcquire).TotalCount(); n != 7 {
			t.Errorf("merged %d acquisitions, want 7", n)
		}
	}
	want := []float64{3, 2, 1}
	for i := range got {
		if len(got[i]) != 3 {
			t.Fatalf("stats %+v, want 3 intervals", got[i])
		}
		for j, st := range got[i] {
			if st.PerS != want[j] || !near(st.MidS, float64(j)+0.5) {
				t.Errorf("relative=%v: interval %d = %+v, want %v/s at %vs", i == 1, j, st, want[j], float64(j)+0.5)
			}
		}
	}
}

func TestFairnessSeries(t *testing.T) {
	t.Parallel()
	lorenz := fairnessSeries([]float64{5, 5, 5, 5})
	assertXYs(t, "equal Lorenz", lorenz, plotter.XYs{{X: 0, Y: 0}, {X: 0.25, Y: 0.25}, {X: 0.5, Y: 0.5}, {X: 0.75, Y: 0.75}, {X: 1, Y: 1}})
	lorenz = fairnessSeries([]float64{0, 12, 0, 0})
	if lorenz[3].Y != 0 || lorenz[4].Y != 1 {
		t.Errorf("one client got all: Lorenz %v", lorenz)
	}
	if l := fairnessSeries(nil); l != nil {
		t.Errorf("no clients: %v", l)
	}

	cells := fixtureCells()
	for i := range cells {
		cells[i].Fairness = nil
	}
	if got := fairnessSeriesOf(cells); len(got) != 0 {
		t.Errorf("fairness drawn without per-client data: %v", got)
	}
	cells[2].Fairness = &result.Fairness{PerClient: []int64{1, 2, 3, 4}}
	cells[1].Fairness = &result.Fairness{PerClient: []int64{5, 5, 5, 5}} // a smaller count: not drawn
	got := fairnessSeriesOf(cells)
	if len(got["hot"]) != 1 || got["hot"][0].Impl != "redis" {
		t.Errorf("fairness series %v, want redis/hot only", got)
	}
}

func TestWakingOf(t *testing.T) {
	t.Parallel()
	cells := fixtureCells()
	for _, tc := range []struct {
		name string
		want waking
	}{
		{"zk-naive", waking{theory: &result.WatchAll}},
		{"zk-pred", waking{theory: &result.WatchPredecessor}},
		{"redis", waking{polling: true}},
		{"unknown", waking{}},
	} {
		got := wakingOf(tc.name, cells)
		if got.polling != tc.want.polling || (got.theory == nil) != (tc.want.theory == nil) ||
			got.theory != nil && *got.theory != *tc.want.theory {
			t.Errorf("wakingOf(%s) = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestIntervalStatsFillsGaps(t *testing.T) {
	t.Parallel()
	// A writer that leaves out empty intervals: acquisitions in seconds
	// 0 and 3, none in 1 and 2 (a stall), the release tag in between.
	var l CellLog
	for _, iv := range []struct {
		tag   string
		start int64
		n     int64
	}{{result.TagAcquire, 0, 50}, {result.TagRelease, 0, 50}, {result.TagRelease, 1000, 1}, {result.TagAcquire, 3000, 40}} {
		h := result.NewHistogram()
		h.RecordValues(200, iv.n)
		h.SetTag(iv.tag)
		h.SetStartTimeMs(5_000_000 + iv.start)
		h.SetEndTimeMs(5_000_000 + iv.start + 1000)
		l.Intervals = append(l.Intervals, h)
	}
	got := l.IntervalStats(result.TagAcquire)
	want := []hlog.IntervalStat{
		{MidS: 0.5, PerS: 50, P50: 200, P99: 200},
		{MidS: 1.5, Empty: true},
		{MidS: 2.5, Empty: true},
		{MidS: 3.5, PerS: 40, P50: 200, P99: 200},
	}
	if len(got) != len(want) {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("interval %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestOpenLoopSeries(t *testing.T) {
	t.Parallel()
	achieved, offered := openLoopSeries(browserFixture().Cells)
	s := findSeries(t, achieved, "zk-pred/rate achieved")
	want := plotter.XYs{{X: 4, Y: 1000}, {X: 16, Y: 600}}
	if len(s.XYs) != 2 || s.XYs[0] != want[0] || s.XYs[1] != want[1] {
		t.Errorf("achieved %v, want %v", s.XYs, want)
	}
	if !slices.Equal(s.PointLabels, []string{"kept up", "40% dropped"}) {
		t.Errorf("point labels %q", s.PointLabels)
	}
	if len(offered) != 1 || offered[0].Label != "offered 1,000/s" || offered[0].XYs[0].Y != 1000 || !offered[0].Theory {
		t.Errorf("offered line %+v", offered)
	}
	if a, o := openLoopSeries(fixtureCells()); a != nil || o != nil {
		t.Errorf("open-loop series from closed loops: %v %v", a, o)
	}
}
