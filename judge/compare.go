package judge

import "math"

// DefaultNoise is the relative change (0.05 = 5%) below which a figure's
// difference between two runs is run-to-run noise, when a comparison
// names none.
const DefaultNoise = 0.05

// Change is a figure's change between two runs as judged.
type Change struct {
	// Band is the absolute difference that still counts as noise: noise
	// times the old value, or twice the rounds' pooled standard error
	// where that is wider.
	Band float64
	// Noise says |new−old| ≤ Band; Better that the change is an
	// improvement, noise or not.
	Noise, Better bool
}

// Regressed says the figure got worse by more than noise.
func (c Change) Regressed() bool { return !c.Noise && !c.Better }

// JudgeChange judges a figure's move from old to new: higherBetter says
// which way is better, noise the relative threshold (DefaultNoise when 0
// or less) and sd the pooled standard error of the rounds behind it (0
// when unknown).
func JudgeChange(old, new float64, higherBetter bool, noise, sd float64) Change {
	if noise <= 0 {
		noise = DefaultNoise
	}
	diff := new - old
	c := Change{Band: max(noise*math.Abs(old), 2*sd)}
	c.Noise = math.Abs(diff) <= c.Band
	c.Better = diff != 0 && (diff > 0) == higherBetter
	return c
}
