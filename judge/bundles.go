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
	Figures      []FigureDelta
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
// slowed is not a lock that did.
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
		c.Figures = append(c.Figures, judgeFigure(o, n, speed, c.MachineMoved))
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
// divided by it, a latency multiplied.
func judgeFigure(o, n *suite.Figure, speed float64, scale bool) FigureDelta {
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
	case (d.Ratio.Point > 1) == n.Lower:
		d.Call = Worse
	default:
		d.Call = Better
	}
	return d
}

// timed says a figure's unit moves with the machine's speed.
func timed(unit string) bool {
	return unit == suite.UnitRate || unit == suite.UnitUs || unit == suite.UnitMs
}
