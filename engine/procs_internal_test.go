package engine

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

// The trial keeps another candidate than the first only when it was
// clearly faster in every round and each was seen often enough to tell.
func TestPickProcs(t *testing.T) {
	try := func(p int, n int64, rounds ...float64) result.ProcsTry {
		var sum float64
		for _, r := range rounds {
			sum += r
		}
		return result.ProcsTry{Procs: p, Grants: n, GrantsPerS: sum / float64(len(rounds)), RoundsPerS: rounds}
	}
	for _, tc := range []struct {
		name      string
		tries     []result.ProcsTry
		keep      int
		undecided bool
		why       string
	}{
		{"second faster in both rounds", []result.ProcsTry{try(2, 5000, 40000, 41000), try(1, 6000, 50000, 49000)}, 1, false, "kept 1"},
		{"first faster in both", []result.ProcsTry{try(2, 6000, 50000, 50000), try(1, 5000, 40000, 40000)}, 0, false, "kept 2"},
		{"second by 2 %", []result.ProcsTry{try(2, 5000, 50000, 50000), try(1, 5100, 51000, 51000)}, 0, true, "none was 3 % faster than the rest in every round"},
		{"second by 4 %", []result.ProcsTry{try(2, 5000, 50000, 50000), try(1, 5200, 52000, 52000)}, 1, false, "kept 1"},
		{"second far ahead in one round only", []result.ProcsTry{try(2, 5000, 50000, 50000), try(1, 6000, 70000, 49000)}, 0, true, "in every round"},
		{"first ahead overall, not in every round", []result.ProcsTry{try(2, 6000, 70000, 49000), try(1, 5000, 50000, 50000)}, 0, true, "in every round"},
		{"too few grants", []result.ProcsTry{try(2, 150, 300, 300), try(1, 400, 800, 800)}, 0, true, "too few grants to tell (150, under 200)"},
		{"three, the last fastest", []result.ProcsTry{try(8, 900, 9000, 9000), try(4, 1000, 10000, 10000), try(6, 1200, 12000, 12000)}, 2, false,
			"GOMAXPROCS 8 vs 4 vs 6 tried in the warm-up: 9000 vs 10000 vs 12000 grants/s, kept 6"},
	} {
		keep, why, undecided := pickProcs(tc.tries)
		if keep != tc.keep || undecided != tc.undecided || !strings.Contains(why, tc.why) {
			t.Errorf("%s: kept %d, undecided %v (%q); want %d, %v (%q)", tc.name, keep, undecided, why, tc.keep, tc.undecided, tc.why)
		}
	}
}
