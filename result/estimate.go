package result

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/lockbench/lockbench/internal/ranktest"
)

// Confidence is the level of every interval lockbench states, and
// 1 − Confidence the level at which its tests call a difference.
const Confidence = ranktest.Confidence

// MinMedianRounds is the fewest rounds whose median has an
// order-statistic interval at Confidence: with five, the smallest and
// largest round cover the median only 94 % of the time.
const MinMedianRounds = 6

// MinTestRounds is the fewest rounds a side from which the rank test
// (ranktest.Test) can call a difference at all.
const MinTestRounds = ranktest.MinRounds

// Methods an Estimate's interval can come from (Estimate.Method).
const (
	// MethodOneRound: a single round has no spread to draw an interval
	// from; Low and High equal Point.
	MethodOneRound = "one round: no interval"
	// MethodTLog: two to five rounds, the geometric mean with Student's t
	// interval on the logarithms (a figure's spread grows with its size).
	MethodTLog = "t on logs"
	// MethodT: as MethodTLog on the values themselves, where a round
	// measured 0 and logarithms do not exist.
	MethodT = "t"
	// MethodMedian: MinMedianRounds or more, the median with the
	// order-statistic interval benchstat gives (no assumption on the
	// distribution).
	MethodMedian = "median, order statistics"
)

// Estimate is a figure measured in several rounds: the point estimate,
// its interval at Confidence, each round's value in run order, and how
// the interval was drawn.
type Estimate struct {
	Point  float64   `json:"point"`
	Low    float64   `json:"low"`
	High   float64   `json:"high"`
	Rounds []float64 `json:"rounds"`
	Method string    `json:"method"`
}

// EstimateOf estimates a figure from its rounds (see the Method
// constants for which interval a count of rounds gets). Rounds that are
// NaN are left out (JSON has no NaN); none left is the zero Estimate.
func EstimateOf(rounds []float64) Estimate {
	vs := slices.DeleteFunc(slices.Clone(rounds), math.IsNaN)
	e := Estimate{Rounds: vs}
	switch n := len(vs); {
	case n == 0:
		return Estimate{}
	case n == 1:
		e.Point, e.Low, e.High, e.Method = vs[0], vs[0], vs[0], MethodOneRound
	case n >= MinMedianRounds:
		s := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(vs), &benchmath.DefaultThresholds), Confidence)
		e.Point, e.Low, e.High, e.Method = s.Center, s.Lo, s.Hi, MethodMedian
	case slices.Min(vs) > 0:
		logs := make([]float64, n)
		for i, v := range vs {
			logs[i] = math.Log(v)
		}
		m, h := tInterval(logs)
		e.Point, e.Low, e.High, e.Method = math.Exp(m), math.Exp(m-h), math.Exp(m+h), MethodTLog
	default:
		m, h := tInterval(vs)
		e.Point, e.Low, e.High, e.Method = m, m-h, m+h, MethodT
	}
	return e
}

// tInterval is the mean of xs (two or more) and the half-width of its
// Student's t interval at Confidence.
func tInterval(xs []float64) (mean, half float64) {
	n := float64(len(xs))
	mean, sd := meanSD(xs)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(1 - (1-Confidence)/2)
	return mean, t * sd / math.Sqrt(n)
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

// HasInterval says whether the estimate has an interval: two or more
// rounds, and as many as its method needs.
func (e Estimate) HasInterval() bool {
	return e.Method != "" && e.Method != MethodOneRound && !math.IsInf(e.Low, 0) && !math.IsInf(e.High, 0)
}

// Excludes says whether the interval lies wholly on one side of v.
func (e Estimate) Excludes(v float64) bool { return e.HasInterval() && (e.Low > v || e.High < v) }

// RelHalfWidth is how far, relative to the point, the interval reaches
// on its wider side: 0.06 for an interval of ±6 %; +Inf without one.
func (e Estimate) RelHalfWidth() float64 {
	if !e.HasInterval() || e.Point == 0 {
		return math.Inf(1)
	}
	return max(e.High/e.Point-1, 1-e.Low/e.Point)
}

// RatioOf estimates the ratio a/b of a figure measured in paired rounds
// (round i of a beside round i of b in time): each pair's ratio, then
// their Estimate, so that drift common to a pair cancels. Pairs with a
// zero or missing side are left out.
func RatioOf(a, b []float64) Estimate {
	var rs []float64
	for i := range min(len(a), len(b)) {
		if a[i] > 0 && b[i] > 0 {
			rs = append(rs, a[i]/b[i])
		}
	}
	return EstimateOf(rs)
}

// MaxRoundsAdvised bounds RoundsFor: beyond it the spread is not noise
// that rounds average away.
const MaxRoundsAdvised = 100

// RoundsFor is how many rounds would give an interval of ±target
// (0.05 for ±5 %) on a figure whose rounds spread as these did, by the t
// interval on logs; 0 when the rounds cannot say (fewer than two, or a
// value ≤ 0), MaxRoundsAdvised+1 when more than MaxRoundsAdvised.
func RoundsFor(rounds []float64, target float64) int {
	if len(rounds) < 2 || target <= 0 || slices.Min(rounds) <= 0 {
		return 0
	}
	logs := make([]float64, len(rounds))
	for i, v := range rounds {
		logs[i] = math.Log(v)
	}
	_, sd := meanSD(logs)
	want := math.Log1p(target)
	for n := 2; n <= MaxRoundsAdvised; n++ {
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - (1-Confidence)/2)
		if t*sd/math.Sqrt(float64(n)) <= want {
			return n
		}
	}
	return MaxRoundsAdvised + 1
}
