package result

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// MethodOLS is the interval of a fitted slope: ordinary least squares,
// Student's t on its standard error.
const MethodOLS = "least squares slope, t"

// MarginalCPU is the servers' CPU time each further hand-off costs, in
// µs: the slope of a burst's server CPU (above the servers' rate at rest)
// against its hand-offs, fitted over one lock's bursts of several sizes
// and their repeats. A burst's own figure divides all of its CPU by its
// hand-offs, set-up and a JVM's first compile of the path included, so it
// reads alike at 32 and 128 waiters though each hand-off at 128 wakes four
// times as many; the slope leaves what every burst pays once in its
// intercept. cells are one lock's burst cells; nil without two sizes.
func MarginalCPU(cells []Cell) *Estimate {
	var xs, ys []float64
	for _, c := range cells {
		n := float64(c.Clients - 1) // hand-offs in one burst
		if c.KindOf() != KindBurst || n < 1 {
			continue
		}
		per := c.RepeatServerCPUUs
		if len(per) == 0 {
			if h, ok := HandoffCosts(c); ok && h.ServerCPUUs != nil {
				per = []float64{*h.ServerCPUUs}
			}
		}
		for _, p := range per {
			xs, ys = append(xs, n), append(ys, p*n)
		}
	}
	if len(xs) < 2 || slices.Min(xs) == slices.Max(xs) {
		return nil
	}
	slope, se := olsSlope(xs, ys)
	e := Estimate{Point: slope, Low: slope, High: slope, Rounds: ys, Method: MethodOneRound}
	if df := len(xs) - 2; df > 0 {
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(1 - (1-Confidence)/2)
		e.Low, e.High, e.Method = slope-t*se, slope+t*se, MethodOLS
	}
	return &e
}

// olsSlope fits y = a + b·x and returns b and its standard error.
func olsSlope(xs, ys []float64) (b, se float64) {
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	b = sxy / sxx
	if len(xs) <= 2 {
		return b, 0
	}
	a := my - b*mx
	var rss float64
	for i := range xs {
		r := ys[i] - a - b*xs[i]
		rss += r * r
	}
	return b, math.Sqrt(rss / (n - 2) / sxx)
}
