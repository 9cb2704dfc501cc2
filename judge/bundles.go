package judge

import (
	"slices"

	"github.com/lockbench/lockbench/internal/ranktest"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/suite"
)

// Call is how one figure of two bundles compares.
type Call int

// The calls. Same is no difference shown ("~"); Untested a figure
// measured without enough rounds on a side to test (a single draw, or a
// burst's or fault's figure), compared by its point only.
const (
	Same Call = iota
	Better
	Worse
	Untested
	OnlyOld
	OnlyNew
	// Drift is a difference the rank test shows but no larger than the
	// machine's own speed moved between the bundles (the yardstick's
	// interval): it is not called a change of the lock.
	Drift
)

// FigureDelta is one figure of one lock in two bundles.
type FigureDelta struct {
	Old, New *suite.Figure
	// Ratio is New/Old, with its interval where both sides had rounds.
	Ratio result.Estimate
	// Adjusted says the new rounds were scaled by the yardstick's ratio
	// before the test: the machine itself moved.
	Adjusted bool
	Test     ranktest.Comparison
	Call     Call
}

// BundleComparison is two bundles side by side: where their machines
// differ, how far the yardstick moved, and each figure's call.
type BundleComparison struct {
	// Machine lists the facts of the two fingerprints that differ; Suite
	// says the two bundles ran different suite versions or tiers.
	Machine []string
	Suite   bool
	// Yardstick is the new bundle's yardstick over the old one's (a
	// ratio of speeds), nil when either lacks one; MachineMoved says the
	// rank test tells the two apart, and then every timed figure is
	// judged after scaling by it.
	Yardstick    *result.Estimate
	YardstickP   float64
	MachineMoved bool
	// Band is how far the machine's speed may have moved between the
	// bundles, new over old, after any scaling: the yardstick's interval,
	// widened to take in 1 when the machine was not shown to move. A
	// timed figure whose ratio, read as a speed, falls inside it is
	// called Drift, not Better or Worse. Zero without a yardstick.
	Band    [2]float64
	Figures []FigureDelta
}

// Regressed lists the figures called worse.
func (c BundleComparison) Regressed() []FigureDelta {
	var out []FigureDelta
	for _, f := range c.Figures {
		if f.Call == Worse {
			out = append(out, f)
		}
	}
	return out
}

// Count is how many figures got each call.
func (c BundleComparison) Count(call Call) int {
	n := 0
	for _, f := range c.Figures {
		if f.Call == call {
			n++
		}
	}
	return n
}

// CompareBundles judges the new bundle's figures against the old one's:
// a difference is called only where both sides measured a figure in
// enough rounds for the rank test (ranktest.Test) and the test tells them
// apart at its level. Machines drift between runs, so where the two
// yardsticks differ by the same test, the new rounds of every timed
// figure are first scaled by the yardsticks' ratio: a machine that
// slowed is not a lock that did. And since a run's rounds share its
// machine's speed, rounds alone tell two runs apart more often than the
// test's level (two runs in a row here once read 8 of 40 figures worse,
// all one way, 1.06-1.09× at p99): a timed figure is called different
// only where its ratio also lies outside what the yardstick's interval
// allows the machine to have moved.
func CompareBundles(old, new *suite.Bundle, oldFigs, newFigs []suite.Figure) BundleComparison {
	c := BundleComparison{Machine: old.Machine.Differences(new.Machine),
		Suite: old.Suite != new.Suite || old.Digest != new.Digest || old.Tier != new.Tier}
	speed := 1.0
	if oy, ny := old.Yardstick, new.Yardstick; oy != nil && ny != nil && oy.Rate != nil && ny.Rate != nil {
		r := result.UnpairedRatioOf(oy.Rate.Rounds, ny.Rate.Rounds)
		t := ranktest.Test(oy.Rate.Rounds, ny.Rate.Rounds)
		c.Yardstick, c.YardstickP = &r, t.P
		if t.Significant {
			c.MachineMoved, speed = true, r.Point
		}
		c.Band = [2]float64{r.Low / speed, r.High / speed}
		if !c.MachineMoved {
			c.Band = [2]float64{min(c.Band[0], 1), max(c.Band[1], 1)}
		}
	}
	key := func(f suite.Figure) string { return f.Key() + "\x00" + f.Impl }
	olds := map[string]*suite.Figure{}
	for i := range oldFigs {
		olds[key(oldFigs[i])] = &oldFigs[i]
	}
	seen := map[string]bool{}
	for i := range newFigs {
		n := &newFigs[i]
		seen[key(*n)] = true
		o, ok := olds[key(*n)]
		if !ok {
			c.Figures = append(c.Figures, FigureDelta{New: n, Call: OnlyNew})
			continue
		}
		c.Figures = append(c.Figures, judgeFigure(o, n, speed, c.MachineMoved, c.Band))
	}
	for i := range oldFigs {
		if !seen[key(oldFigs[i])] {
			c.Figures = append(c.Figures, FigureDelta{Old: &oldFigs[i], Call: OnlyOld})
		}
	}
	return c
}

// judgeFigure calls one figure. speed is the new machine's speed over
// the old one's, applied when scale is set to the timed figures: a rate
// divided by it, a latency multiplied. band is BundleComparison.Band.
func judgeFigure(o, n *suite.Figure, speed float64, scale bool, band [2]float64) FigureDelta {
	d := FigureDelta{Old: o, New: n}
	cur := slices.Clone(n.Rounds)
	if scale && timed(n.Unit) {
		d.Adjusted = true
		for i := range cur {
			if n.Unit == suite.UnitRate {
				cur[i] /= speed
			} else {
				cur[i] *= speed
			}
		}
	}
	if len(o.Rounds) > 0 && len(cur) > 0 {
		d.Ratio = result.UnpairedRatioOf(o.Rounds, cur)
	} else if o.Point > 0 {
		d.Ratio = result.Estimate{Point: n.Point / o.Point, Low: n.Point / o.Point, High: n.Point / o.Point, Method: result.MethodOneRound}
	}
	d.Test = ranktest.Test(o.Rounds, cur)
	switch {
	case !d.Test.Tested:
		d.Call = Untested
		if n.Point == o.Point {
			d.Call = Same
		}
	case !d.Test.Significant:
		d.Call = Same
	case withinDrift(d.Ratio.Point, n.Unit, band):
		d.Call = Drift
	case (d.Ratio.Point > 1) == n.Lower:
		d.Call = Worse
	default:
		d.Call = Better
	}
	return d
}

// withinDrift says a timed figure's ratio, read as the machine's speed
// (a rate as it is, a time inverted), is no more than band lets the
// machine have moved.
func withinDrift(ratio float64, unit string, band [2]float64) bool {
	if !timed(unit) || band[1] == 0 || ratio <= 0 {
		return false
	}
	if unit != suite.UnitRate {
		ratio = 1 / ratio
	}
	return ratio >= band[0] && ratio <= band[1]
}

// timed says a figure's unit moves with the machine's speed.
func timed(unit string) bool {
	return unit == suite.UnitRate || unit == suite.UnitUs || unit == suite.UnitMs
}
