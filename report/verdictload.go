package report

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
)

// effectiveSLO is the SLO the best client count is judged against, and
// whether it is DefaultSLO because the run named none.
func effectiveSLO(slo *SLO) (SLO, bool) {
	if slo == nil {
		return DefaultSLO, true
	}
	return *slo, false
}

// sloText states the SLO as a verdict shows it, saying when it is the
// default.
func sloText(s SLO, def bool) string {
	l := fmt.Sprintf("%s ≤ %v", s.Label(), s.Limit)
	if def {
		l += " (default; --slo sets another)"
	}
	return l
}

func sloLabel(slo *SLO) string { return sloText(effectiveSLO(slo)) }

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

// bestTriedLine is, for one scenario, the most clients and acq/s each
// lock served within the SLO among the counts tried, as a table; the
// question says it is not the capacity, which `lockbench capacity` finds.
func bestTriedLine(b judge.BestTried, slo SLO, def bool) VerdictLine {
	t := &VerdictTable{Header: []string{"lock", "most clients within it", "acq/s there", slo.Label() + " there", "best " + slo.Label(), "tried"}}
	for _, r := range b.Rows {
		tried := make([]string, len(r.Tested))
		for i, n := range r.Tested {
			tried[i] = fmt.Sprint(n)
		}
		if !r.Met {
			t.Rows = append(t.Rows, []string{r.Impl, "none", "—", "—", result.Dur(r.BestUs), strings.Join(tried, ", ")})
			continue
		}
		at := ""
		if r.AtLargest {
			at = "≥ " // the largest count tried: it may serve more
		}
		t.Rows = append(t.Rows, []string{r.Impl, at + commas(int64(r.Clients)), commas(round(r.AcquiresPerS)), result.Dur(r.LatencyUs),
			result.Dur(r.BestUs), strings.Join(tried, ", ")})
	}
	v := VerdictLine{Question: "Best client count tried (" + b.Scenario + ")", Anchor: anchorCapacity, Table: t,
		Answer: "at " + sloText(slo, def) + ", among the client counts this run tried (lockbench capacity searches for the capacity itself)"}
	switch {
	case b.NoneMet():
		v.Bad = true
		v.Answer += " — no implementation met it"
	case len(b.Rows) > 1:
		v.Answer += fmt.Sprintf(" — %s serves most", b.Rows[b.Best].Impl)
	}
	return v
}

// openLine says, per lock, whether it kept up with the offered rate and,
// if not, at which client count it first fell behind.
func openLine(o judge.Open) VerdictLine {
	t := &VerdictTable{Header: []string{"lock", "clients", "offered /s", "served /s", "dropped", "p99 from intended start", "service p99", "kept up"}}
	for _, r := range o.Rows {
		f := r.Figures
		kept := "✓"
		if r.Saturated {
			kept = "✗ saturated"
		}
		t.Rows = append(t.Rows, []string{r.Impl, commas(int64(r.Clients)), commas(round(f.Rate)), commas(round(r.AcqPerS)),
			share(f.Dropped, f.Offered), result.Dur(r.P99), result.Dur(f.ServiceLatencyUs.P99), kept})
	}
	answer := "every lock kept up with its offered rate at every client count"
	if o.Bad() {
		answer = "a lock fell behind its offered rate: the first client count at which it did is shown"
	}
	return VerdictLine{Question: "Open loop", Answer: answer + ".", Anchor: anchorOpen, Bad: o.Bad(), Table: t}
}

// share is "120 (3.1%)".
func share(n, of int64) string {
	if of <= 0 {
		return commas(n)
	}
	return fmt.Sprintf("%s (%.1f%%)", commas(n), 100*float64(n)/float64(of))
}

// faultLine gives, per fault cell, how long the lock took to pass on and
// whether stale writes were fenced, as a table.
func faultLine(fs []judge.Fault) VerdictLine {
	t := &VerdictTable{Header: []string{"lock", "fault", "recovery p50", "max", "against", "outcome"}}
	bad := false
	for _, f := range fs {
		c := f.Cell
		p50, mx, against := "—", "—", "—"
		if r := c.Faults.RecoveryMs; r != nil {
			p50, mx = result.Dur(r.P50*1000), result.Dur(r.Max*1000)
		}
		switch f := c.Faults; {
		case f.ConnPause != nil && f.ConnPause.PauseMs > 0: // a holder that keeps its lock: the stall against the pause
			against = "pause " + result.Dur(f.ConnPause.PauseMs*1000)
		case c.Faults.ConfiguredMs > 0:
			against = "bound " + result.Dur(c.Faults.ConfiguredMs*1000)
		}
		outcome := "✓ safe"
		switch {
		case f.Bad():
			bad = true
			outcome = "UNSAFE — " + UnsafetyWords(f.Unsafety)
			if f.StaleRepeats > 0 {
				outcome += " (stale writes accepted)"
			}
		case f.StaleRepeats > 0:
			outcome = plural(f.Fenced, "stale grant") + ", fenced"
		}
		outcome += silentClause(c.Faults)
		t.Rows = append(t.Rows, []string{f.Impl, f.Scenario, p50, mx, against, outcome})
	}
	answer := "how long each lock took to pass on after the fault, and whether a stale holder's write got through"
	if bad {
		answer = "UNSAFE under a fault — " + answer
	}
	return VerdictLine{Question: "Fault cost", Answer: answer + "; each fault's own account is under Faults.", Anchor: anchorFaults, Bad: bad, Table: t}
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

// gapLine is each lock's hand-off gap at its most clients, as a table,
// naming the slowest p90 against the fastest where it is many times it.
func gapLine(g judge.Gap) VerdictLine {
	t := &VerdictTable{Header: []string{"lock", "clients", "gap p50", "gap p90"}}
	for _, r := range g.Rows {
		t.Rows = append(t.Rows, []string{r.Impl, commas(int64(r.Clients)), result.Dur(r.P50), result.Dur(r.P90)})
	}
	answer := "a holder's release call to the next grant, at each lock's most contended loop"
	if g.Times > 0 {
		answer += fmt.Sprintf(" — %s's p90 is %.0f× %s's", g.Rows[g.Slow].Impl, g.Times, g.Rows[g.Fast].Impl)
	}
	return VerdictLine{Question: "Hand-off gap", Answer: answer + ".", Anchor: anchorResults, Table: t}
}
