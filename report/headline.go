package report

import (
	"github.com/lockbench/lockbench/result"

	"fmt"
	"strings"
)

// Headlines returns one sentence per implementation, in the order the
// implementations first appear, with the numbers that matter: for closed
// loops the best throughput and its p99, and the notifications or retries
// per acquisition at the largest client count; for bursts the wake-ups
// against what theory predicts. Safety violations come first, loudly.
func Headlines(cells []Cell) []string {
	var order []string
	byImpl := map[string][]cellGroup{}
	for _, g := range result.GroupCells(cells) {
		if _, ok := byImpl[g.Impl]; !ok {
			order = append(order, g.Impl)
		}
		byImpl[g.Impl] = append(byImpl[g.Impl], g)
	}
	var out []string
	for _, name := range order {
		var parts []string
		if v := violationSummary(byImpl[name]); v != "" {
			parts = append(parts, v)
		}
		if v := skewSummary(byImpl[name]); v != "" {
			parts = append(parts, v)
		}
		parts = append(parts, findings(byImpl[name])...)
		for _, g := range byImpl[name] {
			var s string
			if isBurst(g.Cells[0]) {
				s = burstHeadline(g)
			} else if isFault(g.Cells[0]) {
				s = faultHeadline(g)
			} else {
				s = loopHeadline(g, wakingOf(name, cells))
			}
			if s != "" {
				parts = append(parts, g.Scenario+": "+s)
			}
		}
		if len(parts) == 0 {
			parts = append(parts, "no acquisitions measured")
		}
		out = append(out, name+": "+strings.Join(parts, "; ")+".")
	}
	return out
}

// findings are what ended cells early as a result (a livelock), loudly,
// after the violations.
func findings(groups []cellGroup) []string {
	var out []string
	for _, g := range groups {
		for _, c := range g.Cells {
			if l := c.Livelock; l != nil && c.Finding == result.FindingLivelock {
				out = append(out, fmt.Sprintf("LIVELOCK in %s with %d clients — no grant for %s while they kept trying, the cell ended at %.1fs: %s did not get the lock, %s of them split votes; %s",
					g.Scenario, c.Clients, result.Dur(l.LimitS*1e6), l.AtS, plural(l.Attempts, "attempt"), commas(l.SplitVotes), plural(l.Errors, "error")))
			}
		}
	}
	return out
}

func violationSummary(groups []cellGroup) string {
	var total int64
	var where []string
	for _, g := range groups {
		for _, c := range g.Cells {
			if c.SafetyViolations > 0 {
				total += c.SafetyViolations
				where = append(where, fmt.Sprintf("%s with %d clients", g.Scenario, c.Clients))
			}
		}
	}
	if total == 0 {
		return ""
	}
	return fmt.Sprintf("UNSAFE — %s of mutual exclusion (%s)", plural(total, "violation"), strings.Join(where, ", "))
}

// burstHeadline judges the largest burst: wake-ups against theory when the
// implementation is woken, else how long the queue took to drain.
func burstHeadline(g cellGroup) string {
	c, ok := largestMeasured(g.Cells)
	if !ok {
		return "no acquisitions" + errorsClause(g.Cells)
	}
	n, what := releaseWakeups(c)
	var s string
	if n > 0 || c.TheoryWakeups != nil {
		s = fmt.Sprintf("%s %s for %s", commas(n), what, plural(c.Acquires, "acquisition"))
		if c.TheoryWakeups != nil {
			if f := theoryFormula(c); f != "" {
				s += fmt.Sprintf(" (theory %s = %s)", f, commas(*c.TheoryWakeups))
			} else {
				s += fmt.Sprintf(" (theory %s)", commas(*c.TheoryWakeups))
			}
		}
	} else {
		s = fmt.Sprintf("%s by %s, p99 %s", plural(c.Acquires, "acquisition"), plural(int64(c.Clients), "client"),
			result.Dur(c.AcquireLatencyUs.P99))
		if c.RetriesPerAcquire > 0 {
			s += fmt.Sprintf(", %s retries per acquisition", perAcq(c.RetriesPerAcquire))
		}
	}
	if a := c.Abandon; leavingQueue(c) {
		s += fmt.Sprintf(", %d waiters gave up (%d out of queue order", a.Count, a.OutOfOrder)
		if a.Leftover >= 0 {
			s += fmt.Sprintf(", %d left on the servers", a.Leftover)
		}
		s += ")"
	}
	return s + errorsClause(g.Cells)
}

// faultHeadline repeats what a fault scenario concluded (its sentence)
// or, without one, how long recovery took against the configured bound.
func faultHeadline(g cellGroup) string {
	c := g.Cells[len(g.Cells)-1]
	switch s := FaultSentence(c); {
	case s != "":
		// The sentence is already about this implementation.
		return strings.TrimRight(strings.TrimPrefix(s, c.Impl+": "), ". ")
	case c.Faults != nil && c.Faults.RecoveryMs != nil:
		f := c.Faults
		s := fmt.Sprintf("recovery p50 %s, max %s over %s", result.Dur(f.RecoveryMs.P50*1000), result.Dur(f.RecoveryMs.Max*1000),
			plural(int64(f.Repeats), "repeat"))
		if f.ConfiguredMs > 0 {
			s += fmt.Sprintf(" (configured bound %s)", result.Dur(f.ConfiguredMs*1000))
		}
		return s + errorsClause(g.Cells)
	}
	return loopHeadline(g, waking{})
}

// loopHeadline gives a closed loop's best throughput and, at the largest
// client count, what each acquisition cost in notifications or retries.
func loopHeadline(g cellGroup, h waking) string {
	best, ok := Cell{}, false
	for _, c := range g.Cells {
		if c.Acquires > 0 && (!ok || c.AcquiresPerS > best.AcquiresPerS) {
			best, ok = c, true
		}
	}
	if !ok {
		return "no acquisitions" + errorsClause(g.Cells)
	}
	s := fmt.Sprintf("best %s acq/s at %s (p99 %s)", commas(round(best.AcquiresPerS)),
		plural(int64(best.Clients), "client"), result.Dur(best.AcquireLatencyUs.P99))
	last, _ := largestMeasured(g.Cells)
	at := fmt.Sprintf(" at %s", plural(int64(last.Clients), "client"))
	if last.NotificationsPerAcquire > 0 || h.theory != nil {
		// Theory predicts release wake-ups; notifications also count
		// what arrivals set off, so they are compared only when the
		// implementation does not count release wake-ups apart.
		per, what := perAcquireWakeups(last)
		clause := fmt.Sprintf("%s %s per acquisition%s", perAcq(per), what, at)
		if what != "notifications" {
			clause = fmt.Sprintf("%s notifications and %s", perAcq(last.NotificationsPerAcquire), clause)
		}
		s += ", " + clause
		if t, ok := notificationTheory(h, last.Clients); ok && last.Locks <= 1 {
			s += fmt.Sprintf(" (theory %s)", theoryLabel(h, t))
		}
	}
	if last.RetriesPerAcquire > 0 {
		s += fmt.Sprintf(", %s retries per acquisition%s", perAcq(last.RetriesPerAcquire), at)
	}
	return s + errorsClause(g.Cells)
}

// theoryLabel is the per-hand-off theory as a sentence shows it: its
// formula, and the figure where the formula depends on n ("n−1 = 15").
func theoryLabel(h waking, t float64) string {
	f := h.theory.PerHandoffFormula
	if !strings.Contains(f, "n") {
		return f
	}
	return fmt.Sprintf("%s = %s", f, commas(round(t)))
}

func errorsClause(cells []Cell) string {
	var n int64
	for _, c := range cells {
		n += c.Errors
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %s", plural(n, "error"))
}

// largestMeasured is the cell with the most clients among those that
// acquired anything.
func largestMeasured(cells []Cell) (Cell, bool) {
	for i := len(cells) - 1; i >= 0; i-- {
		if cells[i].Acquires > 0 {
			return cells[i], true
		}
	}
	return Cell{}, false
}

// skewSummary names, for cells merged from shards, grants of two shards
// that overlapped by no more than the clocks' skew: neither proof of a
// violation nor of safety, so said apart from violations.
func skewSummary(groups []cellGroup) string {
	var total int64
	var where []string
	for _, g := range groups {
		for _, c := range g.Cells {
			if m := c.Merge; m != nil && m.PossibleOverlaps > 0 {
				total += m.PossibleOverlaps
				where = append(where, fmt.Sprintf("%s with %d clients", g.Scenario, c.Clients))
			}
		}
	}
	if total == 0 {
		return ""
	}
	return fmt.Sprintf("%d possible overlaps within the shards' clock skew (%s)", total, strings.Join(where, ", "))
}
