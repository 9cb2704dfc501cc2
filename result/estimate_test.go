package result

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/lockbench/lockbench/internal/ranktest"
)

func TestEstimateOfPicksItsMethodByRounds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rounds   []float64
		method   string
		interval bool
	}{
		{"one round", []float64{100}, MethodOneRound, false},
		{"three rounds", []float64{90, 100, 110}, MethodTLog, true},
		{"a zero round", []float64{0, 1, 2}, MethodT, true},
		{"six rounds", []float64{90, 95, 100, 105, 110, 120}, MethodMedian, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := EstimateOf(tc.rounds)
			if e.Method != tc.method || e.HasInterval() != tc.interval {
				t.Fatalf("EstimateOf(%v) = %+v: want method %q, interval %v", tc.rounds, e, tc.method, tc.interval)
			}
			if e.Low > e.Point || e.Point > e.High || len(e.Rounds) != len(tc.rounds) {
				t.Fatalf("EstimateOf(%v) = %+v: the point must lie in its interval, every round kept", tc.rounds, e)
			}
		})
	}
}

func TestEstimateOfSixRoundsIsTheMedianBetweenTheExtremes(t *testing.T) {
	e := EstimateOf([]float64{120, 90, 100, 110, 95, 105})
	// With six rounds the 95 % order-statistic interval of the median is
	// the smallest and largest round.
	if e.Point != 102.5 || e.Low != 90 || e.High != 120 {
		t.Fatalf("got %+v, want median 102.5 in [90, 120]", e)
	}
}

func TestEstimateTLogMatchesTheTTable(t *testing.T) {
	// ln values 0 and ln 4: mean ln 2, sd ln4/√2, t(1, .975) = 12.706.
	e := EstimateOf([]float64{1, 4})
	half := 12.7062047 * math.Log(4) / math.Sqrt2 / math.Sqrt2
	if math.Abs(e.Point-2) > 1e-9 || math.Abs(math.Log(e.High/e.Point)-half) > 1e-4 {
		t.Fatalf("got %+v, want geometric mean 2 and log half-width %.4f", e, half)
	}
}

func TestRatioOfPairsRoundsSoCommonDriftCancels(t *testing.T) {
	// Both rows drift by ±20 % together; A is always 10 % faster.
	b := []float64{100, 120, 80, 110, 90}
	a := make([]float64, len(b))
	for i, v := range b {
		a[i] = v * 1.1
	}
	r := RatioOf(a, b)
	if math.Abs(r.Point-1.1) > 1e-9 || !r.Excludes(1) {
		t.Fatalf("RatioOf = %+v: want 1.1 with an interval excluding 1", r)
	}
	if ranktest.Test(a, b).Significant {
		t.Fatalf("unpaired, a drift of ±20 %% should hide a 10 %% difference from the rank test")
	}
}

func TestRoundsForGrowsWithTheSpreadAndTheAskedPrecision(t *testing.T) {
	tight, wide := []float64{99, 101, 100, 100.5}, []float64{80, 120, 100, 90}
	// Two rounds would do but for t(1) = 12.7: three.
	if n := RoundsFor(tight, 0.05); n != 3 {
		t.Fatalf("±1 %% rounds need %d rounds for ±5 %%, want 3", n)
	}
	n5, n2 := RoundsFor(wide, 0.05), RoundsFor(wide, 0.02)
	if !(n5 > 2 && n2 > n5) {
		t.Fatalf("a ±20 %% spread: %d rounds for ±5 %%, %d for ±2 %%: want more for less", n5, n2)
	}
	if RoundsFor([]float64{1}, 0.05) != 0 {
		t.Fatal("one round cannot say how many are needed")
	}
}

func TestRoundsOfKeepsEveryRoundAndWritesAsJSON(t *testing.T) {
	mk := func(rate, p99 float64, cpu bool) Cell {
		c := Cell{AcquiresPerS: rate, Acquires: 1000, AcquireLatencyUs: Latency{P50: 10, P99: p99, P999: 2 * p99}}
		if cpu {
			c.Generator = &Generator{CPUSeconds: 0.5, ServerCPUSeconds: map[string]float64{"a": 0.25, "b": 0.25}}
		}
		return c
	}
	r := RoundsOf([]Cell{mk(100, 50, true), mk(110, 60, true), mk(90, 55, false)})
	if r.N != 3 || len(r.AcquiresPerS.Rounds) != 3 || r.P99.Rounds[1] != 60 {
		t.Fatalf("RoundsOf = %+v", r)
	}
	if r.ServerCPUUs != nil || r.GapP50 != nil {
		t.Fatal("a figure missing from a round has no estimate (its rounds would not pair)")
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	r = RoundsOf([]Cell{mk(100, 50, true), mk(110, 60, true)})
	if r.ServerCPUUs == nil || math.Abs(r.ServerCPUUs.Point-500) > 1e-6 || math.Abs(r.LockbenchCPUUs.Point-500) > 1e-6 {
		t.Fatalf("CPU per acquisition: %+v %+v, want 500 µs each", r.ServerCPUUs, r.LockbenchCPUUs)
	}
	if RoundsOf([]Cell{mk(1, 1, true)}) != nil {
		t.Fatal("one round has no round figures")
	}
}

// Rounds pair with another row's by their order: estimating a figure
// must keep it (benchmath sorts the values it is given in place).
func TestEstimateOfKeepsTheRoundsInOrder(t *testing.T) {
	in := []float64{5, 1, 4, 2, 6, 3, 7}
	e := EstimateOf(in)
	if !slices.Equal(e.Rounds, []float64{5, 1, 4, 2, 6, 3, 7}) || !slices.Equal(in, e.Rounds) {
		t.Fatalf("rounds %v, given %v: want the order they were measured in", e.Rounds, in)
	}
}
