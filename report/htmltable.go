package report

import (
	"fmt"
	"slices"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
)

// latencyCols are the quantiles report.html shows wherever it shows a
// latency, with their column headings.
var latencyCols = []string{"p50", "p90", "p95", "p99", "p99.9", "p99.99", "max"}

// latencyCells formats l's quantiles in latencyCols' order; a quantile a
// summary did not keep (p95 and p99.99 before they existed) shows "–".
func latencyCells(l Latency) []string {
	out := make([]string, 0, len(latencyCols))
	for _, v := range []float64{l.P50, l.P90, l.P95, l.P99, l.P999, l.P9999, l.Max} {
		if v <= 0 {
			out = append(out, "–")
		} else {
			out = append(out, result.Dur(v))
		}
	}
	return out
}

// htmlRow is a cell as report.html's results table shows it: compact
// enough for a 1280 px screen; every column is in summary.csv.
type htmlRow struct {
	Impl, Scenario, Clients, PerS string
	Latency                       []string
	Errors, Gap, PerAcq, Wakeups  string
	Safety                        string
	Unsafe, Fenced                bool
}

// htmlRows lays the cells out; wakeups reports whether any cell has
// wake-ups or a theory for them, so that column is worth showing.
func htmlRows(cells []Cell) (rows []htmlRow, wakeups bool) {
	for _, c := range cells {
		r := htmlRow{
			Impl: c.Impl, Scenario: c.Scenario, Clients: fmt.Sprint(c.Clients), PerS: rateInterval(c),
			Latency: latencyCells(c.AcquireLatencyUs), Errors: commas(c.Errors), Gap: gapText(c), PerAcq: "–", Wakeups: "–",
			Safety: "0", Unsafe: judge.CellSafety(c).Bad(),
		}
		if c.Rounds != nil {
			r.Latency[slices.Index(latencyCols, "p99")] = p99Interval(c)
		}
		// A notified waiter's re-checks count as retries too; its
		// notifications are what it costs.
		switch {
		case c.NotificationsPerAcquire > 0:
			r.PerAcq = perAcq(c.NotificationsPerAcquire) + " notif"
		case c.RetriesPerAcquire > 0:
			r.PerAcq = perAcq(c.RetriesPerAcquire) + " retries"
		}
		if n, _ := releaseWakeups(c); n > 0 || c.TheoryWakeups != nil {
			wakeups = true
			r.Wakeups = commas(n)
			if c.TheoryWakeups != nil {
				r.Wakeups += " / " + commas(*c.TheoryWakeups)
			}
		}
		switch u, n := judge.CellSafety(c), judge.FencedStale(c); {
		case u.Bad() && u.Violations() == u.Other && u.LostUpdates == 0 && !u.NotLinearizable:
			r.Safety = "UNSAFE: " + commas(u.Other)
		case u.Bad():
			r.Safety = "UNSAFE: " + UnsafetyWords(u)
		case n > 0:
			r.Safety, r.Fenced = "stale grant, fenced ×"+commas(n), true
		}
		rows = append(rows, r)
	}
	return rows, wakeups
}

// openView is an open-loop cell: what was offered, what was served, and
// latency counted from each arrival's intended start beside the service
// time alone (their gap is the queueing coordinated omission would hide).
type openView struct {
	Impl, Clients, Offered, Achieved, Dropped, Unfinished string
	FromIntended, Service                                 []string
	Saturated                                             bool
}

func openViews(cells []Cell) []openView {
	var out []openView
	for _, c := range cells {
		o := c.Open
		if c.KindOf() != result.KindOpen || o == nil {
			continue
		}
		out = append(out, openView{
			Impl: c.Impl, Clients: fmt.Sprint(c.Clients),
			Offered:  fmt.Sprintf("%s/s (%s)", commas(round(o.Rate)), commas(o.Offered)),
			Achieved: fmt.Sprintf("%s/s", commas(round(c.AcquiresPerS))),
			Dropped:  share(o.Dropped, o.Offered), Unfinished: commas(o.Unfinished),
			FromIntended: latencyCells(c.AcquireLatencyUs), Service: latencyCells(o.ServiceLatencyUs),
			Saturated: judge.Saturated(c),
		})
	}
	return out
}

// faultView is a fault cell: recovery against its bound, what became of
// stale writes, and the scenario's own verdict.
type faultView struct {
	Impl, Scenario, Recovery, Bound, Stale, Verdict string
	Unsafe                                          bool
}

func faultViews(cells []Cell) []faultView {
	var out []faultView
	for _, c := range cells {
		f := c.Faults
		if c.KindOf() != result.KindFault || f == nil {
			continue
		}
		v := faultView{Impl: c.Impl, Scenario: c.Scenario, Recovery: "–", Bound: "–", Stale: "–", Verdict: FaultSentence(c),
			Unsafe: judge.CellSafety(c).Bad()}
		if r := f.RecoveryMs; r != nil {
			v.Recovery = fmt.Sprintf("p50 %s, p99 %s, max %s over %s", result.Dur(r.P50*1000), result.Dur(r.P99*1000),
				result.Dur(r.Max*1000), plural(r.Count, "repeat"))
		}
		if f.ConfiguredMs > 0 {
			v.Bound = result.Dur(f.ConfiguredMs * 1000)
		}
		if stale := judge.StaleWrites(f); stale > 0 {
			if v.Unsafe {
				v.Stale = fmt.Sprintf("UNSAFE: %d of %d accepted", c.SafetyViolations, stale)
			} else {
				v.Stale = fmt.Sprintf("stale grant, fenced: %d of %d rejected", f.StaleWritesRejected, stale)
			}
		}
		out = append(out, v)
	}
	return out
}

// gapText is a cell's hand-off gap, release call to the next grant, as
// "p50 / p90"; "–" where the cell did not measure one.
func gapText(c Cell) string {
	g := c.HandoffGapUs
	if g == nil || g.P50 <= 0 {
		return "–"
	}
	return result.Dur(g.P50) + " / " + result.Dur(g.P90)
}
