package report

import (
	"testing"

	"gonum.org/v1/plot/plotter"
)

// A t interval on a few noisy rounds can reach below zero; on a log axis
// the plot still draws (gonum's LogScale panicked on a bar's low end ≤ 0,
// which killed a suite run), its bar running off the bottom.
func TestErrorBarsBelowZeroOnALogAxis(t *testing.T) {
	xys := plotter.XYs{{X: 8, Y: 300}, {X: 32, Y: 20}}
	errs := plotter.YErrors{{Low: 100, High: 100}, {Low: 45, High: 30}}
	got := positiveErrs(xys, errs)
	if got[0] != errs[0] || got[1].Low >= 20 || 20-got[1].Low <= 0 || got[1].High != 30 {
		t.Errorf("bars %+v, want the first as it was and the second's low end just above zero", got)
	}
	if errs[1].Low != 45 {
		t.Error("positiveErrs changed its input")
	}
}
