package judge

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/suite"
)

// draws is n rounds of a figure around point, lognormal with a 10 %
// spread: the noise of a repeated cell on a busy 2-core machine.
func draws(r *rand.Rand, n int, point float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = point * math.Exp(0.1*r.NormFloat64())
	}
	return out
}

// pairs makes two bundles of figures figures each, six rounds a side;
// the new one's rates are scaled by shift, and its machine (the
// yardstick, and every figure) by speed.
func pairs(seed uint64, figures int, shift, speed float64, yardstick bool) (*suite.Bundle, *suite.Bundle, []suite.Figure, []suite.Figure) {
	r := rand.New(rand.NewPCG(seed, 1))
	old, cur := &suite.Bundle{Suite: "v1"}, &suite.Bundle{Suite: "v1"}
	if yardstick {
		oy, ny := result.EstimateOf(draws(r, 6, 40000)), result.EstimateOf(draws(r, 6, 40000*speed))
		old.Yardstick, cur.Yardstick = &suite.Yardstick{Rate: &oy}, &suite.Yardstick{Rate: &ny}
	}
	var of, nf []suite.Figure
	for i := range figures {
		col := suite.Column{Workload: "hot", Name: "acq/s", Clients: i, Unit: suite.UnitRate}
		o := draws(r, 6, 1000)
		n := draws(r, 6, 1000*shift*speed)
		of = append(of, suite.Figure{Column: col, Impl: "x", Point: o[0], Rounds: o})
		nf = append(nf, suite.Figure{Column: col, Impl: "x", Point: n[0], Rounds: n})
	}
	return old, cur, of, nf
}

func called(c BundleComparison) float64 {
	return float64(c.Count(Better)+c.Count(Worse)) / float64(len(c.Figures))
}

// TestCompareBundlesAA: figures drawn from one distribution on both sides
// are called different about as often as the rank test's level, which
// for six rounds a side is at most 5 %; and a 2× drop is called worse
// nearly always.
func TestCompareBundlesAA(t *testing.T) {
	old, cur, of, nf := pairs(1, 4000, 1, 1, true)
	c := CompareBundles(old, cur, of, nf)
	t.Logf("A/A, six rounds a side: %.4f of %d figures called different", called(c), len(c.Figures))
	if rate := called(c); rate < 0.01 || rate > 0.06 {
		t.Errorf("A/A: %.3f of figures called different, want about the test's level (≤ 0.05)", rate)
	}
	old, cur, of, nf = pairs(2, 1000, 0.5, 1, true)
	c = CompareBundles(old, cur, of, nf)
	t.Logf("a 2× drop: %.4f called worse", float64(c.Count(Worse))/1000)
	if w := float64(c.Count(Worse)) / 1000; w < 0.99 {
		t.Errorf("a 2× drop in rate called worse in %.3f of figures, want nearly all", w)
	}
	if c.Count(Better) != 0 {
		t.Errorf("a 2× drop called better %d times", c.Count(Better))
	}
}

// TestCompareBundlesMachineDrift: a machine 16 % slower in the second run
// (978 → 820 acq/s, as two runs in a row once read here) makes every
// figure of an unchanged lock worse; its yardstick, slower by as much,
// tells the comparison so, and the figures are then called different no
// more often than in an A/A.
func TestCompareBundlesMachineDrift(t *testing.T) {
	old, cur, of, nf := pairs(3, 2000, 1, 0.84, false)
	c := CompareBundles(old, cur, of, nf)
	if w := float64(c.Count(Worse)) / 2000; w < 0.5 {
		t.Fatalf("without a yardstick %.3f called worse: the drift should show (the test below would prove nothing)", w)
	}
	old, cur, of, nf = pairs(3, 2000, 1, 0.84, true)
	c = CompareBundles(old, cur, of, nf)
	if !c.MachineMoved || c.Yardstick == nil || math.Abs(c.Yardstick.Point-0.84) > 0.1 {
		t.Fatalf("yardstick %+v moved=%v, want about 0.84 and moved", c.Yardstick, c.MachineMoved)
	}
	t.Logf("a machine 16 %% slower: %.4f called different without the yardstick, %.4f with it", float64(CompareBundles(&suite.Bundle{}, &suite.Bundle{}, of, nf).Count(Worse))/2000, called(c))
	if rate := called(c); rate > 0.10 {
		t.Errorf("with the yardstick, %.3f of an unchanged lock's figures called different", rate)
	}
	if !c.Figures[0].Adjusted {
		t.Error("figures not marked as scaled by the yardstick")
	}
}

func TestCompareBundlesUntestedAndOneSided(t *testing.T) {
	col := func(name string) suite.Column {
		return suite.Column{Workload: "herd", Name: name, Clients: 8, Lower: true}
	}
	old := []suite.Figure{
		{Column: col("wake-ups / hand-off"), Impl: "zk-naive", Point: 4},
		{Column: col("wake-ups / hand-off"), Impl: "zk-pred", Point: 1},
		{Column: col("gone"), Impl: "zk-pred", Point: 1},
	}
	cur := []suite.Figure{
		{Column: col("wake-ups / hand-off"), Impl: "zk-naive", Point: 4},
		{Column: col("wake-ups / hand-off"), Impl: "zk-pred", Point: 2},
		{Column: col("new"), Impl: "zk-pred", Point: 1},
	}
	c := CompareBundles(&suite.Bundle{}, &suite.Bundle{}, old, cur)
	want := map[string]Call{"zk-naive/wake-ups / hand-off": Same, "zk-pred/wake-ups / hand-off": Untested, "zk-pred/new": OnlyNew, "zk-pred/gone": OnlyOld}
	for _, f := range c.Figures {
		x := f.New
		if x == nil {
			x = f.Old
		}
		if got := f.Call; got != want[x.Impl+"/"+x.Name] {
			t.Errorf("%s %s: call %d, want %d", x.Impl, x.Name, got, want[x.Impl+"/"+x.Name])
		}
	}
	if len(c.Regressed()) != 0 {
		t.Error("a single draw was called a regression")
	}
}

// TestCompareBundlesRunDrift: a run's rounds share its machine's speed,
// so two runs of unchanged locks differ by a few per cent in every
// figure at once, with the yardstick moving as much but too little to
// be shown (two runs in a row here read 8 of 40 figures worse, all one
// way). Figures within the yardstick's interval are called Drift, and
// no more than the test's level of the rest are called different; a
// lock 25 % faster is still called better nearly always.
func TestCompareBundlesRunDrift(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 1))
	run := func(shift float64) (plain, banded BundleComparison) {
		drift := math.Exp(0.04 * r.NormFloat64())
		old, cur, of, nf := pairs(r.Uint64(), 40, shift, drift, true)
		// Each run's rounds share its drift: tighter than a figure's
		// spread between runs, as on this machine.
		for i := range nf {
			for j := range nf[i].Rounds {
				nf[i].Rounds[j] = 1000 * shift * drift * math.Exp(0.02*r.NormFloat64())
				of[i].Rounds[j] = 1000 * math.Exp(0.02*r.NormFloat64())
			}
		}
		return CompareBundles(&suite.Bundle{}, &suite.Bundle{}, of, nf), CompareBundles(old, cur, of, nf)
	}
	var plain, banded, drift, n float64
	for range 200 {
		p, b := run(1)
		plain += called(p)
		banded += called(b)
		drift += float64(b.Count(Drift)) / float64(len(b.Figures))
		n++
	}
	t.Logf("unchanged locks, 200 pairs of runs: %.3f called different by rounds alone, %.3f beyond the yardstick's drift (%.3f called drift)", plain/n, banded/n, drift/n)
	if plain/n < 0.3 {
		t.Fatalf("rounds alone called %.3f different: the run-level drift does not show, and the test below proves nothing", plain/n)
	}
	if banded/n > 0.05 {
		t.Errorf("%.3f of unchanged figures called different beyond the machine's drift, want at most the test's level", banded/n)
	}
	var better float64
	for range 50 {
		_, b := run(1.25)
		better += float64(b.Count(Better)) / float64(len(b.Figures))
	}
	if better/50 < 0.9 {
		t.Errorf("a lock 25 %% faster called better in %.3f of figures, want nearly all", better/50)
	}
}
