package capacity

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// rankLevel is the exact probability that the lo-th and hi-th of n
// ordered draws bound the q-quantile of a continuous distribution: that
// between lo and hi−1 of the draws fall below it, a binomial (n, q) count.
func rankLevel(n, lo, hi int64, q float64) float64 {
	p := 0.0
	for k := lo; k < hi; k++ {
		lg := func(x int64) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
		p += math.Exp(lg(n) - lg(k) - lg(n-k) + float64(k)*math.Log(q) + float64(n-k)*math.Log1p(-q))
	}
	return p
}

// TestQuantileRanksCoverage simulates the order-statistic bounds of a
// quantile (QuantileRanks) on exponential arrivals and compares how often
// they cover the true quantile with the exact binomial level of the ranks
// chosen, and that level with the nominal 95 %.
func TestQuantileRanksCoverage(t *testing.T) {
	t.Parallel()
	const draws = 2000
	r := rand.New(rand.NewPCG(51, 11))
	for _, tc := range []struct {
		n int64
		q float64
	}{{200, 0.5}, {1000, 0.5}, {1000, 0.9}, {2000, 0.99}} {
		lo, hi := QuantileRanks(tc.n, tc.q)
		truth := -math.Log(1 - tc.q) // the exponential's q-quantile
		hits := 0
		xs := make([]float64, tc.n)
		for range draws {
			for i := range xs {
				xs[i] = r.ExpFloat64()
			}
			slices.Sort(xs)
			if xs[lo-1] <= truth && truth <= xs[hi-1] {
				hits++
			}
		}
		level := rankLevel(tc.n, lo, hi, tc.q)
		got := float64(hits) / draws
		sd := math.Sqrt(level * (1 - level) / draws)
		t.Logf("n %d, q %v: ranks %d–%d cover %.1f %% of %d draws; exact level %.2f %%, nominal 95 %%",
			tc.n, tc.q, lo, hi, 100*got, draws, 100*level)
		if math.Abs(got-level) > 4*sd {
			t.Errorf("n %d, q %v: covered %.4f, exact %.4f ± %.4f", tc.n, tc.q, got, level, 4*sd)
		}
		if level < 0.94 {
			t.Errorf("n %d, q %v: ranks %d–%d cover at %.4f, well below the nominal 95 %%", tc.n, tc.q, lo, hi, level)
		}
	}
}
