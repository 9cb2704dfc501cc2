package engine

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

// The trial keeps the faster candidate only when it is clearly faster and
// both were seen often enough to tell.
func TestPickProcs(t *testing.T) {
	try := func(p int, n int64, rate float64) result.ProcsTry {
		return result.ProcsTry{Procs: p, Grants: n, GrantsPerS: rate}
	}
	for _, tc := range []struct {
		name  string
		tries []result.ProcsTry
		keep  int
		why   string
	}{
		{"second clearly faster", []result.ProcsTry{try(2, 5000, 40000), try(1, 6000, 50000)}, 1, "kept 1"},
		{"first faster", []result.ProcsTry{try(2, 6000, 50000), try(1, 5000, 40000)}, 0, "kept 2"},
		{"second by 2 %", []result.ProcsTry{try(2, 5000, 50000), try(1, 5100, 51000)}, 0, "no other was 3 % faster"},
		{"second by 4 %", []result.ProcsTry{try(2, 5000, 50000), try(1, 5200, 52000)}, 1, "kept 1"},
		{"too few grants", []result.ProcsTry{try(2, 150, 300), try(1, 400, 800)}, 0, "too few grants to tell (150, under 200)"},
		{"three, the last fastest", []result.ProcsTry{try(8, 900, 9000), try(4, 1000, 10000), try(6, 1200, 12000)}, 2, "GOMAXPROCS 8 vs 4 vs 6 tried in the warm-up: 9000 vs 10000 vs 12000 grants/s, kept 6"},
	} {
		keep, why := pickProcs(tc.tries)
		if keep != tc.keep || !strings.Contains(why, tc.why) {
			t.Errorf("%s: kept %d (%q), want %d (%q)", tc.name, keep, why, tc.keep, tc.why)
		}
	}
}
