package report

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/impl"
)

// Headlines returns one sentence per implementation, in the order the
// implementations first appear, with the numbers that matter: for closed
// loops the best throughput and its p99, and the notifications or retries
// per acquisition at the largest client count; for bursts the wake-ups
// against what theory predicts. Safety violations come first, loudly.
func Headlines(cells []Cell) []string {
	var order []string
	byImpl := map[string][]cellGroup{}
	for _, g := range groupCells(cells) {
		if _, ok := byImpl[g.impl]; !ok {
			order = append(order, g.impl)
		}
		byImpl[g.impl] = append(byImpl[g.impl], g)
	}
	var out []string
	for _, name := range order {
		var parts []string
		if v := violationSummary(byImpl[name]); v != "" {
			parts = append(parts, v)
		}
		for _, g := range byImpl[name] {
			var s string
			if isBurst(g.scenario) {
				s = burstHeadline(g)
			} else if isFault(g.scenario) {
				s = faultHeadline(g)
			} else {
				s = loopHeadline(g, herdOf(name, cells))
			}
			if s != "" {
				parts = append(parts, g.scenario+": "+s)
			}
		}
		if len(parts) == 0 {
			parts = append(parts, "no acquisitions measured")
		}
		out = append(out, name+": "+strings.Join(parts, "; ")+".")
	}
	return out
}

func violationSummary(groups []cellGroup) string {
	var total int64
	var where []string
	for _, g := range groups {
		for _, c := range g.cells {
			if c.SafetyViolations > 0 {
				total += c.SafetyViolations
				where = append(where, fmt.Sprintf("%s with %d clients", g.scenario, c.Clients))
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
	c, ok := largestMeasured(g.cells)
	if !ok {
		return "no acquisitions" + errorsClause(g.cells)
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
			Dur(c.AcquireLatencyUs.P99))
		if c.RetriesPerAcquire > 0 {
			s += fmt.Sprintf(", %s retries per acquisition", perAcq(c.RetriesPerAcquire))
		}
	}
	return s + errorsClause(g.cells)
}

// faultHeadline repeats what a fault scenario concluded (its verdict) or,
// without one, how long recovery took against the configured bound.
func faultHeadline(g cellGroup) string {
	c := g.cells[len(g.cells)-1]
	switch {
	case c.Verdict != "":
		// The sentence is already about this implementation.
		return strings.TrimRight(strings.TrimPrefix(c.Verdict, c.Impl+": "), ". ")
	case c.Faults != nil && c.Faults.RecoveryMs != nil:
		f := c.Faults
		s := fmt.Sprintf("recovery p50 %s, max %s over %s", Dur(f.RecoveryMs.P50*1000), Dur(f.RecoveryMs.Max*1000),
			plural(int64(f.Repeats), "repeat"))
		if f.ConfiguredMs > 0 {
			s += fmt.Sprintf(" (configured bound %s)", Dur(f.ConfiguredMs*1000))
		}
		return s + errorsClause(g.cells)
	}
	return loopHeadline(g, herdKnown{})
}

// loopHeadline gives a closed loop's best throughput and, at the largest
// client count, what each acquisition cost in notifications or retries.
func loopHeadline(g cellGroup, h herdKnown) string {
	best, ok := Cell{}, false
	for _, c := range g.cells {
		if c.Acquires > 0 && (!ok || c.AcquiresPerS > best.AcquiresPerS) {
			best, ok = c, true
		}
	}
	if !ok {
		return "no acquisitions" + errorsClause(g.cells)
	}
	s := fmt.Sprintf("best %s acq/s at %s (p99 %s)", commas(round(best.AcquiresPerS)),
		plural(int64(best.Clients), "client"), Dur(best.AcquireLatencyUs.P99))
	last, _ := largestMeasured(g.cells)
	at := fmt.Sprintf(" at %s", plural(int64(last.Clients), "client"))
	if last.NotificationsPerAcquire > 0 || (h.known && h.herd != impl.Polling) {
		s += fmt.Sprintf(", %s notifications per acquisition%s", perAcq(last.NotificationsPerAcquire), at)
		if t, ok := notificationTheory(h, last.Clients); ok && last.Locks <= 1 {
			s += fmt.Sprintf(" (theory %s)", theoryLabel(h, t))
		}
	}
	if last.RetriesPerAcquire > 0 {
		s += fmt.Sprintf(", %s retries per acquisition%s", perAcq(last.RetriesPerAcquire), at)
	}
	return s + errorsClause(g.cells)
}

func theoryLabel(h herdKnown, t float64) string {
	if h.herd == impl.WatchPredecessor {
		return "1"
	}
	return fmt.Sprintf("n−1 = %s", commas(round(t)))
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
