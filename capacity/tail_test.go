package capacity

import (
	"math"
	"testing"
)

func TestTailIntervalHoldsTheShare(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tail   Tail
		lo, hi float64 // the Wilson interval, computed apart
	}{
		{Tail{Over: 10, Arrivals: 1000}, 0.005441, 0.018309},
		{Tail{Over: 0, Arrivals: 1000}, 0, 0.003827},
		{Tail{Over: 1000, Arrivals: 1000}, 0.996173, 1},
		{Tail{Over: 50, Arrivals: 100}, 0.403832, 0.596168},
	} {
		lo, hi := tc.tail.Interval()
		if math.Abs(lo-tc.lo) > 1e-5 || math.Abs(hi-tc.hi) > 1e-5 {
			t.Errorf("%+v: interval [%.6f, %.6f], want [%.6f, %.6f]", tc.tail, lo, hi, tc.lo, tc.hi)
		}
		if s := tc.tail.Share(); s < lo || s > hi {
			t.Errorf("%+v: share %.4f outside its interval [%.4f, %.4f]", tc.tail, s, lo, hi)
		}
	}
	if lo, hi := (Tail{}).Interval(); lo != 0 || hi != 1 {
		t.Errorf("no arrivals: [%g, %g], want [0, 1]", lo, hi)
	}
}

func TestTailDecidesOnlyWhatItsArrivalsCan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tail Tail
		want bool
	}{
		{Tail{Over: 12, Arrivals: 1000}, false},   // 1.2 %: cannot tell from 1 %
		{Tail{Over: 115, Arrivals: 10000}, false}, // 1.15 % of ten times as many: [0.96, 1.38]
		{Tail{Over: 150, Arrivals: 10000}, true},  // 1.5 %: [1.28, 1.76] lies above 1 %
		{Tail{Over: 2, Arrivals: 1000}, true},     // 0.2 %: [0.05, 0.72] lies below
		{Tail{Over: 40, Arrivals: 1000}, true},    // 4 %
		{Tail{Over: 5, Arrivals: 1000}, false},    // 0.5 %: [0.21, 1.17] holds 1 %
	} {
		if got := tc.tail.Decides(0.01); got != tc.want {
			lo, hi := tc.tail.Interval()
			t.Errorf("%+v (interval [%.4f, %.4f]) decides 1%%: %v, want %v", tc.tail, lo, hi, got, tc.want)
		}
	}
	if p := (Tail{Over: 3, Arrivals: 4}).Add(Tail{Over: 1, Arrivals: 6}); p.Over != 4 || p.Arrivals != 10 {
		t.Errorf("pooled %+v", p)
	}
}
