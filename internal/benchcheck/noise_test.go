package benchcheck

import (
	"math"
	"math/rand/v2"
	"testing"
)

// noisy is one benchmark's p99-ns over runs runs, each drawn from a
// lognormal of median 300 µs·scale and ±10 % spread.
func noisy(r *rand.Rand, runs int, scale float64) map[string]map[string][]float64 {
	vs := make([]float64, runs)
	for i := range vs {
		vs[i] = scale * 300e3 * math.Exp(0.1*r.NormFloat64())
	}
	return map[string]map[string][]float64{"BenchmarkLock/impl=redis": {"p99-ns": vs}}
}

// gate runs pairs noisy comparisons of 6 runs against 6, the new side's
// scaled, under limit, and counts the regressions called and the pairs
// whose U-test alone was significant.
func gate(r *rand.Rand, pairs int, scale float64, limit Limit) (regressed, significant int) {
	for range pairs {
		rows := Compare(noisy(r, 6, 1), noisy(r, 6, scale), []Limit{limit})
		if len(rows) != 1 || !rows[0].Tested {
			panic("one tested row expected")
		}
		if rows[0].Regressed {
			regressed++
		}
		if rows[0].P < 0.05 {
			significant++
		}
	}
	return regressed, significant
}

// The gate on realistic noise: many A/A pairs of 6 runs against 6 (±10 %)
// raise few false alarms, a 2× slowdown is caught almost always. With a
// limit of 0 only the U-test guards, and its alarms in the regressing
// direction are at most half its two-sided level, 2.5 %; the bound adds
// three binomial standard deviations.
func TestGateUnderNoise(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(51, 5))
	const pairs = 1000
	bound := func(level float64) int {
		return int(pairs * (level + 3*math.Sqrt(level*(1-level)/pairs)))
	}
	for _, tc := range []struct {
		name  string
		limit Limit
	}{
		{"default p99 limit (25 %)", Limit{Unit: "p99-ns", Max: 0.25}},
		{"limit 0: the U-test alone", Limit{Unit: "p99-ns", Max: 0}},
	} {
		fa, sig := gate(r, pairs, 1, tc.limit)
		caught, _ := gate(r, pairs, 2, tc.limit)
		t.Logf("%s: A/A %d false alarms of %d (U-test significant either way in %d), 2× shift caught %d of %d",
			tc.name, fa, pairs, sig, caught, pairs)
		if fa > bound(0.025) {
			t.Errorf("%s: %d false alarms of %d A/A pairs, above %d", tc.name, fa, pairs, bound(0.025))
		}
		if sig > bound(0.05) {
			t.Errorf("%s: U-test significant in %d of %d A/A pairs, above %d", tc.name, sig, pairs, bound(0.05))
		}
		if caught < pairs*99/100 {
			t.Errorf("%s: a 2× slowdown caught in %d of %d pairs", tc.name, caught, pairs)
		}
	}
}
