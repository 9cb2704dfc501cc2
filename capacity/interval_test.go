package capacity

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestAnswerIntervalTakesEachEndFromTheTailsOrTheBracket(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a                 Answer
		low, high         float64
		lowFrom, highFrom string
	}{
		{Answer{Rate: 1200, Missed: 1260, Confirmed: true}, 1200, 1260, FromBracket, FromBracket},
		{Answer{Rate: 1200, Missed: 1260, Low: 1100, High: 1300}, 1100, 1300, FromTails, FromTails},
		{Answer{Rate: 1200, Missed: 1260, Low: 1100}, 1100, 1260, FromTails, FromBracket},
		{Answer{Rate: 1200, Missed: 1260, High: 1250}, 1200, 1250, FromBracket, FromTails},
		{Answer{Rate: 1000}, 1000, 0, FromBracket, ""},
		{Answer{}, 0, 0, "", ""},
	} {
		l, h, lf, hf := c.a.Interval()
		if l != c.low || h != c.high || lf != c.lowFrom || hf != c.highFrom {
			t.Errorf("%+v: [%g (%s), %g (%s)], want [%g (%s), %g (%s)]", c.a, l, lf, h, hf, c.low, c.lowFrom, c.high, c.highFrom)
		}
	}
}

// The ranks bound the true quantile of the distribution drawn from about
// 95 % of the time: counted over many samples, not assumed.
func TestQuantileRanksCoverTheQuantile(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(43, 39))
	const q, n, runs = 0.99, 4000, 2000
	truth := -math.Log(1 - q) // the exponential's 99th percentile
	lo, hi := QuantileRanks(n, q)
	if lo >= int64(q*n) || hi <= int64(q*n) {
		t.Fatalf("ranks [%d, %d] do not hold n·q = %g", lo, hi, q*n)
	}
	covered := 0
	xs := make([]float64, n)
	for range runs {
		for i := range xs {
			xs[i] = rng.ExpFloat64()
		}
		slices.Sort(xs)
		if xs[lo-1] <= truth && truth <= xs[hi-1] {
			covered++
		}
	}
	if c := float64(covered) / runs; c < 0.93 || c > 0.975 {
		t.Errorf("the interval held the true p99 in %.1f %% of %d samples, want about 95 %%", 100*c, runs)
	}
	if lo, hi := QuantileRanks(200, 0.99); hi != 200 || lo < 190 {
		t.Errorf("200 arrivals: ranks [%d, %d], want the upper end at the largest", lo, hi)
	}
	if lo, hi := QuantileRanks(0, 0.99); lo != 0 || hi != 0 {
		t.Errorf("no arrivals: ranks [%d, %d]", lo, hi)
	}
}
