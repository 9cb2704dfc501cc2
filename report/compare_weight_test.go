package report

import (
	"math"
	"testing"

	"github.com/lockbench/lockbench/result"
)

func TestWeightedSpread(t *testing.T) {
	t.Parallel()
	xs := []float64{700, 1300, 800, 1200}
	// By hand: deviations ±300, ±200 from 1000, √(260000/3) = 294.392.
	if s := weighted(xs, []float64{1, 1, 1, 1}); math.Abs(s.sd-294.392) > 1e-3 || s.n != 4 {
		t.Errorf("equal weights: %+v, want sd 294.392 over 4", s)
	}
	if sd := stddev(xs); math.Abs(sd-294.392) > 1e-3 {
		t.Errorf("stddev = %.3f, want 294.392", sd)
	}
	// A cell cut 0.5 s into its last second: the stub counts as half an
	// interval, in the spread and in how many intervals the spread rests on.
	l := logWithRates(1000, 1000, 1000)
	h := result.NewHistogram()
	h.RecordValues(100, 100) // 200/s, as clients stopped
	h.SetTag(result.TagAcquire)
	h.SetStartTimeMs(3000)
	h.SetEndTimeMs(3500)
	l.Intervals = append(l.Intervals, h)
	got := spreadOf(l).perS
	const plain = 400.0 // unweighted, by hand: deviations 200, 200, 200, -600 from 800
	if !(got.sd < plain) || math.Abs(got.n-3.5*3.5/3.25) > 1e-9 {
		t.Errorf("spread with a half-second stub = %+v, want below the unweighted %.0f over %.2f intervals", got, plain, 3.5*3.5/3.25)
	}
}
