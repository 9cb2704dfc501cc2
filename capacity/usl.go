package capacity

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/optimize"
)

// Point is one closed-loop measurement: throughput X at N clients.
type Point struct {
	N int
	X float64
}

// USL is the Universal Scalability Law fitted to a closed loop's points:
// X(N) = λN / (1 + σ(N−1) + κN(N−1)). σ is contention (the share that
// serialises), κ coherency (the cost each client adds to every other's
// work: a herd of woken waiters shows here).
type USL struct {
	Lambda, Sigma, Kappa float64
	// R2 is the fit's coefficient of determination over the points.
	R2 float64
}

// X is the fitted throughput at n clients.
func (u USL) X(n float64) float64 {
	return u.Lambda * n / (1 + u.Sigma*(n-1) + u.Kappa*n*(n-1))
}

// NStar is the client count of peak throughput, √((1−σ)/κ); +Inf when κ
// is zero (no retrograde region: throughput levels off, never falls).
func (u USL) NStar() float64 {
	if u.Kappa <= 0 {
		return math.Inf(1)
	}
	return math.Sqrt(math.Max(1-u.Sigma, 0) / u.Kappa)
}

// Peak is the fitted throughput at NStar (at least one client), or the
// asymptote λ/σ when there is no peak.
func (u USL) Peak() float64 {
	n := u.NStar()
	if math.IsInf(n, 1) {
		if u.Sigma <= 0 {
			return math.Inf(1)
		}
		return u.Lambda / u.Sigma
	}
	return u.X(math.Max(n, 1))
}

// ErrFewPoints is returned by FitUSL given fewer than three distinct
// client counts: three parameters need three points.
var ErrFewPoints = errors.New("capacity: a USL fit needs three or more client counts")

// FitUSL fits the USL to points by least squares, λ > 0, 0 ≤ σ ≤ 1 and
// κ ≥ 0, with gonum's Nelder–Mead (the residual has kinks where the bounds
// fold it, which a gradient method would trip on).
func FitUSL(points []Point) (USL, error) {
	if distinct(points) < 3 {
		return USL{}, ErrFewPoints
	}
	// λ from the fewest clients: X(1) = λ exactly.
	first := points[0]
	for _, p := range points {
		if p.N < first.N {
			first = p
		}
	}
	lambda0 := first.X / float64(first.N)
	if lambda0 <= 0 {
		return USL{}, fmt.Errorf("capacity: no throughput at %d clients", first.N)
	}
	decode := func(x []float64) USL {
		// λ scaled by its guess, σ folded into [0,1], κ kept ≥ 0: the
		// optimiser works unconstrained.
		return USL{Lambda: lambda0 * math.Exp(x[0]), Sigma: math.Min(math.Abs(x[1]), 1), Kappa: x[2] * x[2]}
	}
	sse := func(x []float64) float64 {
		u := decode(x)
		var s float64
		for _, p := range points {
			d := (u.X(float64(p.N)) - p.X) / lambda0
			s += d * d
		}
		return s
	}
	best := USL{}
	bestF := math.Inf(1)
	// A few starts: σ small or large, κ small or large; the surface has
	// shallow valleys where σ and κ trade off.
	for _, start := range [][]float64{{0, 0.05, 0.01}, {0, 0.5, 0.001}, {0, 0.01, 0.1}, {0, 0.9, 0.0001}} {
		res, err := optimize.Minimize(optimize.Problem{Func: sse}, start,
			&optimize.Settings{MajorIterations: 5000, FuncEvaluations: 20000}, &optimize.NelderMead{})
		if err != nil && res == nil {
			continue
		}
		if res.F < bestF {
			bestF, best = res.F, decode(res.X)
		}
	}
	if math.IsInf(bestF, 1) {
		return USL{}, errors.New("capacity: the USL fit did not converge")
	}
	best.R2 = rSquared(points, best)
	return best, nil
}

func distinct(points []Point) int {
	seen := map[int]bool{}
	for _, p := range points {
		seen[p.N] = true
	}
	return len(seen)
}

// rSquared is 1 − SSres/SStot of the fit over the points.
func rSquared(points []Point, u USL) float64 {
	var mean float64
	for _, p := range points {
		mean += p.X
	}
	mean /= float64(len(points))
	var res, tot float64
	for _, p := range points {
		d := p.X - u.X(float64(p.N))
		res += d * d
		t := p.X - mean
		tot += t * t
	}
	if tot == 0 {
		return 0
	}
	return 1 - res/tot
}
