package judge

import (
	"math"
	"slices"

	"github.com/lockbench/lockbench/result"
)

// Precision is the interval (±5 %) a run's rounds are judged against:
// the report says how many rounds would give it where they did not.
const Precision = 0.05

// Figure names a timed figure that rounds estimate and rows are compared
// on.
type Figure string

// Figures compared side by side, and whether more of them is better.
const (
	FigureAcquiresPerS Figure = "acq/s"
	FigureP99          Figure = "p99"
)

// Ratio is one figure of row A over row B in the same scenario and client
// count, from their paired rounds: a difference is called only when the
// interval excludes 1; otherwise CouldTell is the relative size this run
// could have seen (the ratio's interval's half-width).
type Ratio struct {
	A, B   CellRef
	Figure Figure
	Ratio  result.Estimate
	// Differs: the interval excludes 1.
	Differs bool
	// CouldTell is the ratio's interval's relative half-width (0.06 for
	// ±6 %); +Inf when the rounds give no interval.
	CouldTell float64
}

// Noise is the machine's own noise as the run measured it: how far one
// row's acq/s moved from round to round (the geometric standard
// deviation, as a relative spread), the median over the cells measured
// in rounds and the largest.
type Noise struct {
	Cells   int
	Median  float64
	Largest float64
	At      CellRef
	// Rounds is how many rounds each cell was measured in (the largest).
	Rounds int
	// Advised is how many rounds would have given every cell's acq/s an
	// interval of ±Precision, by the spread observed (0 when the rounds
	// cannot say; more than result.MaxRoundsAdvised when no count will).
	Advised int
}

// Rounds is what a run measured in rounds says: paired ratios between
// rows side by side, and the noise floor.
type Rounds struct {
	Ratios []Ratio
	Noise  Noise
}

// rounds judges the cells measured in rounds; nil when none was.
func rounds(cells []result.Cell) *Rounds {
	var out Rounds
	var spreads []float64
	for _, c := range cells {
		if c.Rounds == nil {
			continue
		}
		sp := logSpread(c.Rounds.AcquiresPerS.Rounds)
		if math.IsNaN(sp) {
			continue
		}
		spreads = append(spreads, sp)
		if sp >= out.Noise.Largest {
			out.Noise.Largest, out.Noise.At = sp, Ref(c)
		}
		out.Noise.Rounds = max(out.Noise.Rounds, c.Rounds.N)
		out.Noise.Advised = max(out.Noise.Advised, result.RoundsFor(c.Rounds.AcquiresPerS.Rounds, Precision))
	}
	if len(spreads) == 0 {
		return nil
	}
	slices.Sort(spreads)
	out.Noise.Cells, out.Noise.Median = len(spreads), spreads[len(spreads)/2]
	out.Ratios = ratios(cells)
	return &out
}

// ratios compares, in each scenario and client count, every other
// implementation measured in rounds with the first.
func ratios(cells []result.Cell) []Ratio {
	var out []Ratio
	first := map[[2]any]result.Cell{}
	for _, c := range cells {
		if c.Rounds == nil {
			continue
		}
		k := [2]any{c.Scenario, c.Clients}
		a, ok := first[k]
		if !ok {
			first[k] = c
			continue
		}
		for _, f := range []Figure{FigureAcquiresPerS, FigureP99} {
			out = append(out, ratioOf(c, a, f))
		}
	}
	return out
}

func ratioOf(a, b result.Cell, f Figure) Ratio {
	pick := func(c result.Cell) []float64 {
		if f == FigureP99 {
			return c.Rounds.P99.Rounds
		}
		return c.Rounds.AcquiresPerS.Rounds
	}
	e := result.RatioOf(pick(a), pick(b))
	return Ratio{A: Ref(a), B: Ref(b), Figure: f, Ratio: e, Differs: e.Excludes(1), CouldTell: e.RelHalfWidth()}
}

// logSpread is the relative spread of values: exp(sd of their logs) − 1;
// NaN for fewer than two or a value ≤ 0.
func logSpread(vs []float64) float64 {
	if len(vs) < 2 || slices.Min(vs) <= 0 {
		return math.NaN()
	}
	var m, s float64
	for _, v := range vs {
		m += math.Log(v)
	}
	m /= float64(len(vs))
	for _, v := range vs {
		s += (math.Log(v) - m) * (math.Log(v) - m)
	}
	return math.Expm1(math.Sqrt(s / float64(len(vs)-1)))
}
