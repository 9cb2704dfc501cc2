package engine

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

// The trial keeps another candidate than the first only when it was
// clearly faster in every round, or as fast and clearly cheaper in
// lockbench's CPU a grant in every round, and each was seen often enough
// to tell.
func TestPickProcs(t *testing.T) {
	// try is a candidate with its two rounds' rates, and lockbench's CPU
	// a grant the same in both rounds (cpu) unless cpus gives each.
	try := func(p int, n int64, rounds []float64, cpus ...float64) result.ProcsTry {
		if len(cpus) == 1 {
			cpus = []float64{cpus[0], cpus[0]}
		}
		return result.ProcsTry{Procs: p, Grants: n, GrantsPerS: (rounds[0] + rounds[1]) / 2, RoundsPerS: rounds,
			CPUPerGrantUs: (cpus[0] + cpus[1]) / 2, RoundsCPUPerGrantUs: cpus}
	}
	r := func(a, b float64) []float64 { return []float64{a, b} }
	for _, tc := range []struct {
		name      string
		tries     []result.ProcsTry
		keep      int
		undecided bool
		why       string
	}{
		{"second faster in both rounds", []result.ProcsTry{try(2, 5000, r(40000, 41000), 20), try(1, 6000, r(50000, 49000), 20)}, 1, false, "kept 1"},
		{"first faster in both", []result.ProcsTry{try(2, 6000, r(50000, 50000), 20), try(1, 5000, r(40000, 40000), 20)}, 0, false, "kept 2"},
		{"second by 2 %, same CPU", []result.ProcsTry{try(2, 5000, r(50000, 50000), 20), try(1, 5100, r(51000, 51000), 20)}, 0, true, "none was 3 % faster, nor 10 % cheaper"},
		{"second by 4 %", []result.ProcsTry{try(2, 5000, r(50000, 50000), 20), try(1, 5200, r(52000, 52000), 20)}, 1, false, "kept 1"},
		{"second far ahead in one round only", []result.ProcsTry{try(2, 5000, r(50000, 50000), 20), try(1, 6000, r(70000, 49000), 20)}, 0, true, "in every round"},
		{"first ahead overall, not in every round", []result.ProcsTry{try(2, 6000, r(70000, 49000), 20), try(1, 5000, r(50000, 50000), 20)}, 0, true, "in every round"},
		{"as fast, second 20 % cheaper in both rounds", []result.ProcsTry{try(2, 5000, r(46000, 45000), 21.5), try(1, 5000, r(44000, 48000), 17)}, 1, false,
			"kept 1: as fast within 3 %, and 17.0 µs of lockbench's CPU a grant against 21.5 µs"},
		{"cheaper in one round only", []result.ProcsTry{try(2, 5000, r(46000, 45000), 21.5), try(1, 5000, r(44000, 48000), 17, 21)}, 0, true, "nor 10 % cheaper"},
		{"cheaper but 5 % slower", []result.ProcsTry{try(2, 5000, r(50000, 47000), 21.5), try(1, 5000, r(46000, 46000), 17)}, 0, true, "nor 10 % cheaper"},
		{"too few grants", []result.ProcsTry{try(2, 150, r(300, 300), 20), try(1, 400, r(800, 800), 10)}, 0, true, "too few grants to tell (150, under 200)"},
		{"three, the last fastest", []result.ProcsTry{try(8, 900, r(9000, 9000), 20), try(4, 1000, r(10000, 10000), 20), try(6, 1200, r(12000, 12000), 20)}, 2, false,
			"GOMAXPROCS 8 vs 4 vs 6 tried in the warm-up: 9000 vs 10000 vs 12000 grants/s, kept 6"},
	} {
		keep, why, undecided := pickProcs(tc.tries)
		if keep != tc.keep || undecided != tc.undecided || !strings.Contains(why, tc.why) {
			t.Errorf("%s: kept %d, undecided %v (%q); want %d, %v (%q)", tc.name, keep, undecided, why, tc.keep, tc.undecided, tc.why)
		}
	}
}
