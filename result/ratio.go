package result

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MethodWelchLog is the interval of a ratio of two unpaired sets of
// rounds: Welch's t interval on the difference of their logs' means.
const MethodWelchLog = "welch t on logs"

// UnpairedRatioOf estimates b/a for two sets of rounds measured apart (two
// runs, two machines), unlike RatioOf's pairs: the ratio of their
// geometric means, with Welch's t interval on the logs at Confidence.
// Values that are not positive are left out; fewer than two a side give a
// point without an interval.
func UnpairedRatioOf(a, b []float64) Estimate {
	la, lb := logs(a), logs(b)
	if len(la) == 0 || len(lb) == 0 {
		return Estimate{}
	}
	ma, sa := meanSDOf(la)
	mb, sb := meanSDOf(lb)
	d := mb - ma
	e := Estimate{Point: math.Exp(d), Method: MethodOneRound}
	if len(la) < 2 || len(lb) < 2 {
		e.Low, e.High = e.Point, e.Point
		return e
	}
	va, vb := sa*sa/float64(len(la)), sb*sb/float64(len(lb))
	se := math.Sqrt(va + vb)
	// Welch–Satterthwaite degrees of freedom; equal samples make them n−1+n−1.
	df := float64(len(la) + len(lb) - 2)
	if va+vb > 0 {
		df = (va + vb) * (va + vb) / (va*va/float64(len(la)-1) + vb*vb/float64(len(lb)-1))
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-Confidence)/2)
	e.Low, e.High, e.Method = math.Exp(d-t*se), math.Exp(d+t*se), MethodWelchLog
	return e
}

func logs(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 0) {
			out = append(out, math.Log(x))
		}
	}
	return out
}

func meanSDOf(xs []float64) (mean, sd float64) {
	if len(xs) < 2 {
		return xs[0], 0
	}
	return meanSD(xs)
}
