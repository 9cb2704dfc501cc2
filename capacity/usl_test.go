package capacity

import (
	"context"
	"errors"
	"math"
	"testing"
)

func TestFitUSLRecoversKnownParameters(t *testing.T) {
	t.Parallel()
	for _, want := range []USL{
		{Lambda: 1000, Sigma: 0.05, Kappa: 0.001},
		{Lambda: 689, Sigma: 0.3, Kappa: 0.0002},
		{Lambda: 250, Sigma: 0.01, Kappa: 0.02},
	} {
		var pts []Point
		for _, n := range []int{1, 2, 4, 8, 16, 24, 32, 64, 128} {
			pts = append(pts, Point{N: n, X: want.X(float64(n))})
		}
		got, err := FitUSL(pts)
		if err != nil {
			t.Fatal(err)
		}
		if rel(got.Lambda, want.Lambda) > 1e-3 || math.Abs(got.Sigma-want.Sigma) > 1e-3 || rel(got.Kappa, want.Kappa) > 0.02 {
			t.Errorf("fit %+v, want %+v", got, want)
		}
		if got.R2 < 0.9999 {
			t.Errorf("R² %.6f on exact points, want ≈ 1", got.R2)
		}
		if rel(got.NStar(), want.NStar()) > 0.02 {
			t.Errorf("N* %.2f, want %.2f", got.NStar(), want.NStar())
		}
	}
}

func TestFitUSLOnNoisyPointsHasLowerR2(t *testing.T) {
	t.Parallel()
	u := USL{Lambda: 1000, Sigma: 0.05, Kappa: 0.001}
	var pts []Point
	for i, n := range []int{1, 2, 4, 8, 16, 32, 64, 128} {
		noise := 1 + 0.3*float64(i%2*2-1) // ±30 %, alternating
		pts = append(pts, Point{N: n, X: u.X(float64(n)) * noise})
	}
	got, err := FitUSL(pts)
	if err != nil {
		t.Fatal(err)
	}
	if got.R2 >= 0.99 || got.R2 <= 0 {
		t.Errorf("R² %.3f on ±30%% noise, want clearly below 1", got.R2)
	}
}

func TestFitUSLNeedsThreePoints(t *testing.T) {
	t.Parallel()
	_, err := FitUSL([]Point{{1, 100}, {2, 180}, {2, 181}})
	if !errors.Is(err, ErrFewPoints) {
		t.Fatalf("err %v, want ErrFewPoints", err)
	}
}

func TestSweepDoublesThenRefinesAroundThePeak(t *testing.T) {
	t.Parallel()
	u := USL{Lambda: 1000, Sigma: 0.02, Kappa: 0.0015} // N* ≈ 25.6
	var asked []int
	pts, err := Sweep(context.Background(), func(_ context.Context, n int) (float64, error) {
		asked = append(asked, n)
		return u.X(float64(n)), nil
	}, 128)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{1, 2, 4, 8, 16, 32, 64, 128} {
		if asked[i] != n {
			t.Fatalf("asked %v, want doubling first", asked)
		}
	}
	if len(asked) > 2*7+6 {
		t.Errorf("%d cells, want at most %d", len(asked), 2*7+6)
	}
	best := pts[0]
	for _, p := range pts {
		if p.X > best.X {
			best = p
		}
	}
	if best.N < 20 || best.N > 32 {
		t.Errorf("best measured at %d clients, want near 25.6 (refined between 16 and 32): %v", best.N, asked)
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].N <= pts[i-1].N {
			t.Fatalf("points not ascending: %v", pts)
		}
	}
}

func rel(a, b float64) float64 { return math.Abs(a-b) / math.Abs(b) }
