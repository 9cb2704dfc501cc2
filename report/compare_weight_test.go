package report

import (
	"math"
	"testing"

	"github.com/lockbench/lockbench/result"
)

func TestWeightedSpread(t *testing.T) {
	t.Parallel()
	xs := []float64{700, 1300, 800, 1200}
	if s := weighted(xs, []float64{1, 1, 1, 1}); math.Abs(s.sd-stddev(xs)) > 1e-9 || s.n != 4 {
		t.Errorf("equal weights: %+v, want sd %.1f over 4", s, stddev(xs))
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
	plain := stddev([]float64{1000, 1000, 1000, 200})
	if !(got.sd < plain) || math.Abs(got.n-3.5*3.5/3.25) > 1e-9 {
		t.Errorf("spread with a half-second stub = %+v, want below the unweighted %.0f over %.2f intervals", got, plain, 3.5*3.5/3.25)
	}
}
