// Package ranktest is the one test lockbench calls a difference between
// two sets of measurements with: benchstat's Mann-Whitney U-test
// (golang.org/x/perf/benchmath), shared by compare, the verdict's paired
// rounds and the benchmark gate, so that they cannot disagree.
package ranktest

import (
	"slices"

	"golang.org/x/perf/benchmath"
)

// Confidence is the level of every interval lockbench states, and
// 1 − Confidence the level at which Test calls a difference.
const Confidence = 0.95

// MinRounds is the fewest values a side from which Test can call a
// difference at all: with three a side, its smallest p-value is 0.1.
const MinRounds = 4

// Comparison is the rank test's answer on two sets of rounds.
type Comparison struct {
	// P is the test's p-value (1 when not Tested).
	P float64
	// Tested says both sides had MinRounds rounds or more.
	Tested bool
	// Significant: Tested and P below 1 − Confidence.
	Significant bool
}

// Test compares two sets of rounds with benchstat's test, the
// Mann-Whitney U-test (golang.org/x/perf/benchmath): the one test
// lockbench's comparisons and its benchmark gate share.
func Test(old, cur []float64) Comparison {
	if len(old) < MinRounds || len(cur) < MinRounds {
		return Comparison{P: 1}
	}
	th := benchmath.Thresholds{CompareAlpha: 1 - Confidence}
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(old), &th), benchmath.NewSample(slices.Clone(cur), &th))
	return Comparison{P: c.P, Tested: true, Significant: c.P < c.Alpha}
}
