package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/result"
)

// effectiveSLO is the SLO capacity is judged against, and whether it is
// DefaultSLO because the run named none.
func effectiveSLO(slo *SLO) (SLO, bool) {
	if slo == nil {
		return DefaultSLO, true
	}
	return *slo, false
}

// sloLabel states the SLO as a verdict shows it, saying when it is the
// default.
func sloLabel(slo *SLO) string {
	s, def := effectiveSLO(slo)
	l := fmt.Sprintf("%s ≤ %v", s.Label(), s.Limit)
	if def {
		l += " (default; --slo sets another)"
	}
	return l
}

// capacityCells keeps the cells whose latency stands for a load: closed
// and open loops. A burst's latency is its queue's length; a fault's is
// the fault's.
func capacityCells(cells []Cell) []Cell {
	var out []Cell
	for _, c := range cells {
		if k := c.KindOf(); k == result.KindClosed || k == result.KindOpen {
			out = append(out, c)
		}
	}
	return out
}

// capacityVerdicts gives, per scenario, the most clients and acq/s each
// implementation served within the SLO, and which served most.
func capacityVerdicts(cells []Cell, slo *SLO) []VerdictLine {
	s, _ := effectiveSLO(slo)
	rows := result.Capacity(capacityCells(cells), s)
	var scenarios []string
	for _, r := range rows {
		if !slices.Contains(scenarios, r.Scenario) {
			scenarios = append(scenarios, r.Scenario)
		}
	}
	var out []VerdictLine
	for _, sc := range scenarios {
		var parts []string
		var best *CapacityRow
		for i, r := range rows {
			if r.Scenario != sc {
				continue
			}
			if !r.Met {
				parts = append(parts, fmt.Sprintf("%s none (best %s %s)", r.Impl, s.Label(), result.Dur(r.BestUs)))
				continue
			}
			at := ""
			if r.Clients == slices.Max(r.Tested) && r.FirstMissed == 0 {
				at = "≥ " // the largest count tried: capacity may be higher
			}
			parts = append(parts, fmt.Sprintf("%s %s%s at %s acq/s", r.Impl, at, plural(int64(r.Clients), "client"), commas(round(r.AcquiresPerS))))
			if best == nil || r.AcquiresPerS > best.AcquiresPerS {
				best = &rows[i]
			}
		}
		v := VerdictLine{Question: "Capacity (" + sc + ")", Anchor: anchorCapacity,
			Answer: "at " + sloLabel(slo) + ": " + strings.Join(parts, "; ")}
		switch {
		case best == nil:
			v.Bad = true
			v.Answer += " — no implementation met it"
		case len(parts) > 1:
			v.Answer += fmt.Sprintf(" — %s serves most", best.Impl)
		}
		out = append(out, v)
	}
	return out
}

// saturated reports whether an open-loop cell fell behind its offered
// rate: it dropped or left arrivals unserved, or served under 95% of it.
func saturated(c Cell) bool {
	o := c.Open
	return o.Dropped > 0 || o.Unfinished > 0 || c.AcquiresPerS < 0.95*o.Rate
}

// openLoopVerdict says, per implementation, whether it kept up with the
// offered rate and, if not, at which client count it first fell behind.
func openLoopVerdict(cells []Cell) (VerdictLine, bool) {
	var parts []string
	bad := false
	for _, g := range result.GroupCells(cells) {
		if g.Cells[0].KindOf() != result.KindOpen || g.Cells[0].Open == nil {
			continue
		}
		var sat *Cell
		for i := range g.Cells {
			if g.Cells[i].Open != nil && saturated(g.Cells[i]) {
				sat = &g.Cells[i]
				break
			}
		}
		last := g.Cells[len(g.Cells)-1]
		if sat == nil {
			parts = append(parts, fmt.Sprintf("%s kept up with %s/s at every client count (p99 from intended start %s, service %s)",
				g.Impl, commas(round(last.Open.Rate)), result.Dur(last.AcquireLatencyUs.P99), result.Dur(last.Open.ServiceLatencyUs.P99)))
			continue
		}
		bad = true
		o := sat.Open
		parts = append(parts, fmt.Sprintf("%s saturated at %s: %s of %s/s achieved, %s dropped of %s offered",
			g.Impl, plural(int64(sat.Clients), "client"), commas(round(sat.AcquiresPerS)), commas(round(o.Rate)),
			share(o.Dropped, o.Offered), commas(o.Offered)))
	}
	if len(parts) == 0 {
		return VerdictLine{}, false
	}
	return VerdictLine{Question: "Open loop", Answer: strings.Join(parts, "; ") + ".", Anchor: anchorOpen, Bad: bad}, true
}

// share is "120 (3.1%)".
func share(n, of int64) string {
	if of <= 0 {
		return commas(n)
	}
	return fmt.Sprintf("%s (%.1f%%)", commas(n), 100*float64(n)/float64(of))
}

// silentClause says, for a crash that also silenced the holder's
// connection (a lock of the connection's), how the silent holders fared.
func silentClause(f *result.Faults) string {
	if f.ConnCrash == nil {
		return ""
	}
	var s string
	for _, fate := range silentFates(f.ConnCrash, int64(f.Repeats)) {
		s += "; a silent holder " + fate.text
	}
	return s
}

// faultVerdict gives, per fault cell, how long the lock took to pass on
// and whether stale writes were fenced.
func faultVerdict(cells []Cell) (VerdictLine, bool) {
	var parts []string
	bad := false
	for _, c := range cells {
		if c.KindOf() != result.KindFault || c.Faults == nil {
			continue
		}
		f := c.Faults
		s := c.Impl + " " + c.Scenario + ": "
		if f.RecoveryMs != nil {
			s += fmt.Sprintf("recovery p50 %s, max %s", result.Dur(f.RecoveryMs.P50*1000), result.Dur(f.RecoveryMs.Max*1000))
			switch {
			case f.ConnPause != nil && f.ConnPause.PauseMs > 0: // a holder that keeps its lock: the stall against the pause
				s += fmt.Sprintf(" (pause %s)", result.Dur(f.ConnPause.PauseMs*1000))
			case f.ConfiguredMs > 0:
				s += fmt.Sprintf(" (bound %s)", result.Dur(f.ConfiguredMs*1000))
			}
		} else {
			s += "no recovery measured"
		}
		s += silentClause(f)
		switch stale := staleWrites(f); {
		case c.SafetyViolations > 0:
			bad = true
			s += fmt.Sprintf("; UNSAFE — %s", plural(c.SafetyViolations, "violation"))
			if stale > 0 {
				s += " (stale writes accepted)"
			}
		case stale > 0:
			s += fmt.Sprintf("; %s, fenced", plural(fencedStale(c), "stale grant"))
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return VerdictLine{}, false
	}
	return VerdictLine{Question: "Fault cost", Answer: strings.Join(parts, "; ") + ".", Anchor: anchorFaults, Bad: bad}, true
}
