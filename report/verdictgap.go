package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/result"
)

// gapVerdict says what a hand-off costs each implementation: the hand-off
// gap (a holder's release call to the next grant of the lock) at the most
// clients of its contended closed-loop cells, p50 and p90. The p90 tells
// a gap that waits for something besides the network — etcd's mutex
// waiting for the server's 100 ms catch-up of unsynced watches — from one
// that does not, where the p50 may hide it. No line without such cells.
func gapVerdict(cells []Cell) (VerdictLine, bool) {
	best := map[string]Cell{}
	var impls []string
	for _, c := range cells {
		if c.Open != nil || c.Faults != nil || c.Clients < 2 || c.HandoffGapUs == nil || c.HandoffGapUs.P50 <= 0 {
			continue
		}
		have, ok := best[c.Impl]
		if !ok {
			impls = append(impls, c.Impl)
		}
		if !ok || c.Clients > have.Clients {
			best[c.Impl] = c
		}
	}
	if len(impls) == 0 {
		return VerdictLine{}, false
	}
	parts := make([]string, 0, len(impls))
	for _, n := range impls {
		c := best[n]
		parts = append(parts, fmt.Sprintf("%s %s p50, %s p90 at %s", n, result.Dur(c.HandoffGapUs.P50),
			result.Dur(c.HandoffGapUs.P90), plural(int64(c.Clients), "client")))
	}
	slow := slices.MaxFunc(impls, func(a, b string) int { return cmpF(best[a].HandoffGapUs.P90, best[b].HandoffGapUs.P90) })
	fast := slices.MinFunc(impls, func(a, b string) int { return cmpF(best[a].HandoffGapUs.P90, best[b].HandoffGapUs.P90) })
	clause := ""
	if r := best[slow].HandoffGapUs.P90 / best[fast].HandoffGapUs.P90; len(impls) > 1 && r >= 3 {
		clause = fmt.Sprintf(" — %s's p90 is %.0f× %s's", slow, r, fast)
	}
	return VerdictLine{Question: "Hand-off gap", Answer: strings.Join(parts, "; ") + clause + ".", Anchor: anchorResults}, true
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
