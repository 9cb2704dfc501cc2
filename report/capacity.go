package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/result"
)

// DescribeCapacity says in words what a capacity row found.
func DescribeCapacity(r result.CapacityRow, slo result.SLO) string {
	if !r.Met {
		counts := make([]string, len(r.Tested))
		for i, n := range r.Tested {
			counts[i] = fmt.Sprint(n)
		}
		return fmt.Sprintf("no client count met %s ≤ %v (tried %s; best %s %s)",
			slo.Label(), slo.Limit, strings.Join(counts, ", "), slo.Label(), result.Dur(r.BestUs))
	}
	s := fmt.Sprintf("%s at %s acq/s (%s %s ≤ %v)",
		plural(int64(r.Clients), "client"), commas(round(r.AcquiresPerS)), slo.Label(), result.Dur(r.LatencyUs), slo.Limit)
	if r.FirstMissed > 0 && r.FirstMissed < r.Clients {
		s += fmt.Sprintf("; but %d clients missed it", r.FirstMissed)
	} else if r.Clients == slices.Max(r.Tested) {
		s += "; the largest count tried, so capacity may be higher"
	}
	return s
}
