package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/result"
)

// VerdictLine is the answer to one question a run can answer, with where
// on report.html its evidence is.
type VerdictLine struct {
	Question string // "Safety", "Herd cost", "Capacity (hot)", …
	Answer   string
	// Anchor is the id of the section or figure holding the evidence.
	Anchor string
	// Bad marks an answer that is a failure: unsafe, or no capacity.
	Bad bool
	// Table, if set, gives the answer's figures as a small table.
	Table *VerdictTable
}

// DefaultSLO is what capacity is judged against when a run names no SLO:
// a p99 that an interactive request can afford to wait for a lock.
var DefaultSLO = result.SLO{Quantile: "p99", Limit: 10 * time.Millisecond}

// Anchors of report.html's sections, for VerdictLine.Anchor.
const (
	anchorResults  = "results"
	anchorCapacity = "capacity"
	anchorOpen     = "open-loop"
	anchorFaults   = "faults"
)

// figureAnchor is the id report.html gives the figure of that name.
func figureAnchor(name string) string { return "fig-" + name }

// Verdict answers, one line each, the questions the cells can answer:
// is the lock safe, what does a release cost in wake-ups against theory,
// how many clients meet the SLO (slo, or DefaultSLO when nil) and which
// implementation serves most, what a fault costs, where an open loop
// saturates, and whether lockbench, the servers or the machine's cores
// were the limit. A question the run has no data for gets no line.
func Verdict(cells []Cell, slo *SLO) []VerdictLine {
	if len(cells) == 0 {
		return nil
	}
	out := []VerdictLine{safetyVerdict(cells)}
	if v, ok := herdVerdict(cells); ok {
		out = append(out, v)
	}
	if v, ok := gapVerdict(cells); ok {
		out = append(out, v)
	}
	out = append(out, capacityVerdicts(cells, slo)...)
	if v, ok := openLoopVerdict(cells); ok {
		out = append(out, v)
	}
	if v, ok := faultVerdict(cells); ok {
		out = append(out, v)
	}
	if v, ok := limitVerdict(cells); ok {
		out = append(out, v)
	}
	return out
}

// fencedStale is how many stale grants a cell saw whose write the lock's
// fencing token turned away: the remedy working, not a violation.
func fencedStale(c Cell) int64 {
	if c.Faults == nil || c.SafetyViolations > 0 || staleWrites(c.Faults) == 0 {
		return 0
	}
	return c.Faults.StaleWritesRejected
}

func safetyVerdict(cells []Cell) VerdictLine {
	var grants, violations, fenced int64
	var where, fencedBy []string
	for _, c := range cells {
		grants += c.Acquires
		if c.SafetyViolations > 0 {
			violations += c.SafetyViolations
			where = append(where, fmt.Sprintf("%s %s at %s (%d)", c.Impl, c.Scenario, plural(int64(c.Clients), "client"), c.SafetyViolations))
		}
		if n := fencedStale(c); n > 0 {
			fenced += n
			fencedBy = append(fencedBy, c.Impl+" "+c.Scenario)
		}
	}
	v := VerdictLine{Question: "Safety", Anchor: anchorResults}
	if violations > 0 {
		v.Bad = true
		v.Answer = fmt.Sprintf("UNSAFE — %s in %s: %s", plural(violations, "violation"), plural(grants, "grant"), strings.Join(where, ", "))
	} else {
		v.Answer = fmt.Sprintf("✓ 0 violations in %s", plural(grants, "grant"))
	}
	if fenced > 0 {
		v.Answer += fmt.Sprintf("; %s, fenced (%s): the token turned the late write away", plural(fenced, "stale grant"), strings.Join(fencedBy, ", "))
	}
	return v
}

// herdVerdict compares, per implementation whose waiting scheme makes a
// prediction, the release wake-ups of its largest burst (or, without
// bursts, of its largest closed loop) with theory, and says whether the
// server's own count of watch events matches what the clients received.
func herdVerdict(cells []Cell) (VerdictLine, bool) {
	if v, ok := herdCostVerdict(cells); ok {
		return v, true
	}
	return loopHerdVerdict(cells)
}

// loopHerdVerdict is the herd line from closed loops: release wake-ups
// per acquisition at the largest client count on one lock, against the
// wake-ups of one hand-off with the other n−1 clients waiting.
func loopHerdVerdict(cells []Cell) (VerdictLine, bool) {
	var parts []string
	perHandoff := map[string]float64{}
	var largest int
	for _, g := range result.GroupCells(closedLoops(result.WithoutFaults(cells))) {
		c, ok := largestMeasured(g.Cells)
		if !ok || c.KindOf() != result.KindClosed || c.Locks > 1 || c.Clients < 2 || c.TheoryOf() == nil {
			continue
		}
		per, what := perAcquireWakeups(c)
		t := c.TheoryOf()
		want := t.PerHandoff(float64(c.Clients))
		parts = append(parts, fmt.Sprintf("%s %s %s per acquisition at %s (theory %s %s)%s", c.Impl, perAcq(per), what,
			plural(int64(c.Clients), "client"), theoryLabel(waking{theory: t}, want), agreement(per, want), serverClause(c)))
		perHandoff[c.Impl] = per
		largest = max(largest, c.Clients)
	}
	if len(parts) == 0 {
		return VerdictLine{}, false
	}
	return VerdictLine{Question: "Herd cost", Answer: strings.Join(parts, "; ") + ratioClause(perHandoff, largest) + ".",
		Anchor: figureAnchor("per-acquire")}, true
}

// perAcquireWakeups is what a closed-loop cell's hand-offs cost: release
// wake-ups per acquisition when the implementation counts them apart,
// else every notification.
func perAcquireWakeups(c Cell) (float64, string) {
	if c.ReleaseWakeups > 0 || c.TheoryOf() != nil { // no fallback under a theory: see releaseWakeups
		if c.Acquires == 0 {
			return 0, "release wake-ups"
		}
		return float64(c.ReleaseWakeups) / float64(c.Acquires), "release wake-ups"
	}
	return c.NotificationsPerAcquire, "notifications"
}

// exactAgreement marks a burst's count against theory: the burst makes
// the count exact (README), so ✓ is equality and anything else is ✗,
// however near.
func exactAgreement(got, want int64) string {
	if got == want {
		return "✓"
	}
	if want <= 0 {
		return fmt.Sprintf("✗ (measured %s)", commas(got))
	}
	return fmt.Sprintf("✗ (measured %+d, %+.1f%%)", got-want, 100*float64(got-want)/float64(want))
}

// agreement marks a closed loop's per-acquisition figure against theory:
// ✓ within 5%. A closed loop's count is not exact — arrivals and
// departures of waiters between hand-offs move it — unlike a burst's.
func agreement(got, want float64) string {
	if want <= 0 {
		return ""
	}
	if math.Abs(got-want) <= 0.05*want {
		return "✓"
	}
	return fmt.Sprintf("✗ (measured %+.0f%%)", 100*(got-want)/want)
}

// serverClause says what the server counted: ✓ when it sent exactly the
// watch events the clients received.
func serverClause(c Cell) string {
	v, ok := c.Server["watch_triggered"]
	if !ok {
		return ""
	}
	cn, ok := c.Server["client_notifications"]
	switch {
	case c.Shard != nil:
		return fmt.Sprintf(", server fired %s watches for all shards (merge checks them)", commas(v))
	case !ok:
		return fmt.Sprintf(", server fired %s watches", commas(v))
	case cn == v:
		return fmt.Sprintf(", server fired %s watches, all received ✓", commas(v))
	}
	return fmt.Sprintf(", server fired %s watches but clients received %s ✗", commas(v), commas(cn))
}

// ratioClause says how many times the costliest implementation's wake-ups
// per hand-off are the cheapest's, when they differ.
func ratioClause(per map[string]float64, n int) string {
	if len(per) < 2 {
		return ""
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range per {
			if !yield(k) {
				return
			}
		}
	})
	hi, lo := names[0], names[0]
	for _, k := range names {
		if per[k] > per[hi] {
			hi = k
		}
		if per[k] < per[lo] {
			lo = k
		}
	}
	if per[lo] <= 0 || per[hi] < 1.5*per[lo] {
		return ""
	}
	return fmt.Sprintf(" — %s wakes %.0f× as many waiters per hand-off as %s at up to %d clients", hi, per[hi]/per[lo], lo, n)
}
