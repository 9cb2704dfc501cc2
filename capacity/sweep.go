package capacity

import (
	"context"
	"slices"
)

// Measure runs one closed-loop cell of n clients and returns its
// throughput. An error ends the sweep.
type Measure func(ctx context.Context, n int) (float64, error)

// Sweep measures throughput at 1, 2, 4, … up to maxClients (and
// maxClients itself), then refines around the highest: the midpoints
// between it and its neighbours, twice, so that the peak is found to a
// client count or so near small counts and to a quarter of a doubling
// near large ones. At most 2·log2(maxClients)+6 cells run.
func Sweep(ctx context.Context, measure Measure, maxClients int) ([]Point, error) {
	maxClients = max(maxClients, 1)
	var pts []Point
	seen := map[int]bool{}
	at := func(n int) error {
		if seen[n] || n < 1 || n > maxClients {
			return nil
		}
		seen[n] = true
		x, err := measure(ctx, n)
		if err != nil {
			return err
		}
		pts = append(pts, Point{N: n, X: x})
		return nil
	}
	for n := 1; n < maxClients; n *= 2 {
		if err := at(n); err != nil {
			return pts, err
		}
	}
	if err := at(maxClients); err != nil {
		return pts, err
	}
	for range 2 {
		for _, n := range refine(pts) {
			if err := at(n); err != nil {
				return pts, err
			}
		}
	}
	slices.SortFunc(pts, func(a, b Point) int { return a.N - b.N })
	return pts, nil
}

// refine names the midpoints between the highest point and its
// neighbours.
func refine(pts []Point) []int {
	s := slices.Clone(pts)
	slices.SortFunc(s, func(a, b Point) int { return a.N - b.N })
	best := 0
	for i, p := range s {
		if p.X > s[best].X {
			best = i
		}
	}
	var out []int
	if best > 0 {
		out = append(out, (s[best-1].N+s[best].N)/2)
	}
	if best < len(s)-1 {
		out = append(out, (s[best].N+s[best+1].N)/2)
	}
	return out
}
