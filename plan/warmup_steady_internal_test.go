package plan

import "testing"

// The steady-state test, on ZooKeeper's per-second rates in the
// production profile as two warm-ups on one machine saw them.
func TestSteadyWaitsOutAJVMsPlateau(t *testing.T) {
	climbing := []float64{189, 334, 386, 251, 269, 320, 298, 396, 495, 620, 677, 632, 457, 422, 557, 627, 686, 697, 698, 658, 547, 655, 691, 682, 626}
	for n := 2; n <= 20; n++ {
		if steady(climbing[:n]) {
			t.Errorf("steady after %d s at %v/s: the rate went on to double", n, climbing[n-1])
		}
	}
	if !steady(climbing) {
		t.Errorf("not steady after %d s, the last ten seconds within 5 %%", len(climbing))
	}
	plateau := []float64{189, 266, 290, 215, 251, 233, 276, 275}
	if steady(plateau) {
		t.Error("steady on the first plateau, 8 s in")
	}
	flat := []float64{500, 505, 495, 500, 502, 498, 501, 499, 500, 503}
	if !steady(flat) || steady(flat[:9]) {
		t.Error("a flat rate is steady once two windows are in, not before")
	}
}
