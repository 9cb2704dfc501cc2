package ranktest

import (
	"math"
	"math/rand/v2"
	"testing"
)

// exactP is the two-sided p-value of the Mann-Whitney U statistic of xs
// against ys (distinct values), by enumerating every way of choosing which
// len(xs) of the pooled ranks belong to xs: the share of assignments whose
// U lies at least as far from its mean as the one observed.
func exactP(xs, ys []float64) float64 {
	n, m := len(xs), len(ys)
	u := func(a, b []float64) float64 {
		s := 0.0
		for _, x := range a {
			for _, y := range b {
				if x > y {
					s++
				}
			}
		}
		return s
	}
	mid := float64(n*m) / 2
	obs := math.Abs(u(xs, ys) - mid)
	// U of an assignment is the sum of xs' ranks minus n(n+1)/2.
	var count, extreme float64
	var walk func(next, left int, rankSum int)
	walk = func(next, left, rankSum int) {
		if left == 0 {
			count++
			if math.Abs(float64(rankSum-n*(n+1)/2)-mid) >= obs-1e-9 {
				extreme++
			}
			return
		}
		for r := next; r <= n+m-left+1; r++ {
			walk(r+1, left-1, rankSum+r)
		}
	}
	walk(1, n, 0)
	return extreme / count
}

func TestPValueAgainstExactEnumeration(t *testing.T) {
	t.Parallel()
	// 4 against 4 wholly apart: 2 of C(8,4) = 70 assignments are as
	// extreme.
	if got := exactP([]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}); math.Abs(got-2.0/70) > 1e-12 {
		t.Fatalf("the enumeration itself: %v, want 2/70", got)
	}
	if c := Test([]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}); math.Abs(c.P-2.0/70) > 1e-9 {
		t.Fatalf("4 against 4 wholly apart: p %v, want 2/70 = %v", c.P, 2.0/70)
	}
	r := rand.New(rand.NewPCG(4, 51))
	checked := 0
	for n := MinRounds; n <= 7; n++ {
		for m := MinRounds; m <= 7; m++ {
			for range 40 {
				xs, ys := make([]float64, n), make([]float64, m)
				shift := r.Float64() * 2
				for i := range xs {
					xs[i] = r.NormFloat64()
				}
				for i := range ys {
					ys[i] = r.NormFloat64() + shift
				}
				want := exactP(xs, ys)
				c := Test(xs, ys)
				if math.Abs(c.P-want) > 1e-9 {
					t.Fatalf("%d against %d %v %v: p %v, exact %v", n, m, xs, ys, c.P, want)
				}
				if c.Significant != (want < 1-Confidence) {
					t.Fatalf("%d against %d: significant %v at exact p %v", n, m, c.Significant, want)
				}
				checked++
			}
		}
	}
	t.Logf("%d p-values equal exact enumeration", checked)
}
