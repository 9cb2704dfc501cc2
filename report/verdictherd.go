package report

import (
	"fmt"
	"math"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
)

// herdLine is the herd's cost from bursts: a row per lock at its largest
// burst (its n in the row and the sentence, since locks may differ in it)
// — wake-ups per hand-off against theory, the servers' messages and CPU
// per hand-off, lockbench's CPU, the hand-off gap, how many times the
// cheapest lock's server CPU it costs, and the growth in n where its
// interval is known — and one sentence naming the dearest and the cheapest.
func herdLine(h judge.Herd) VerdictLine {
	t := &VerdictTable{Header: []string{"lock", "n", "wake-ups / hand-off", "theory", "server msgs / hand-off",
		"server CPU / hand-off", "lockbench CPU / hand-off", "gap p50", "× cheapest", "growth in n (wake-ups; server CPU)", "server's count"}}
	for _, r := range h.Rows {
		c := r.Cost
		row := []string{r.Impl, commas(int64(r.Clients)), fmt.Sprintf("%.2f", c.Wakeups), theoryMark(r.Theory)}
		row = append(row, optional(c.Messages, func(v float64) string { return fmt.Sprintf("%.1f %s", v, c.MessagesUnit) }))
		cpu := optional(c.ServerCPUUs, micros)
		if s := r.RepeatCPU; s != nil {
			cpu += fmt.Sprintf(" (%s–%s over %d)", micros(s.Min), micros(s.Max), s.N)
		}
		row = append(row, cpu, optional(c.GeneratorCPUUs, micros))
		gap := "—"
		if c.GapUs != nil {
			gap = micros(c.GapUs.P50)
		}
		times := "—"
		if r.TimesCheapest != nil {
			times = fmt.Sprintf("%.1f×", *r.TimesCheapest)
		}
		row = append(row, gap, times, growthText(r.GrowthWakeups)+"; "+growthText(r.GrowthCPU), serverText(r.Server))
		t.Rows = append(t.Rows, row)
	}
	answer := "cost per hand-off at each lock's largest burst below"
	if h.Cheapest >= 0 && h.Dearest != h.Cheapest && *h.Rows[h.Cheapest].Cost.ServerCPUUs > 0 {
		d, ch := h.Rows[h.Dearest], h.Rows[h.Cheapest]
		answer = fmt.Sprintf("dearest %s, %s of server CPU per hand-off at %s (%.1f× %s, the cheapest at %s at %s)",
			d.Impl, micros(*d.Cost.ServerCPUUs), plural(int64(d.Clients), "client"),
			*d.TimesCheapest, ch.Impl, micros(*ch.Cost.ServerCPUUs), plural(int64(ch.Clients), "client"))
	}
	return VerdictLine{Question: "Herd cost", Answer: answer + ratioText(h.Ratio) + ".", Anchor: figureAnchor("burst-costs"), Table: t}
}

// loopHerdLine is the herd from closed loops, one row a lock.
func loopHerdLine(h judge.LoopHerd) VerdictLine {
	t := &VerdictTable{Header: []string{"lock", "clients", "wake-ups / acq", "counted", "theory", "server's count"}}
	for _, r := range h.Rows {
		mark := "✓"
		if !r.Within {
			mark = fmt.Sprintf("✗ (measured %+.0f%%)", 100*r.OffBy)
		}
		t.Rows = append(t.Rows, []string{r.Impl, commas(int64(r.Clients)), perAcq(r.Wake.PerAcquire), countedWord(r.Wake.Counted),
			theoryLabel(r.Wake.Formula, *r.Wake.TheoryPerHandoff) + " " + mark, serverText(r.Server)})
	}
	return VerdictLine{Question: "Herd cost", Answer: "wake-ups per acquisition at each lock's most clients on one lock, against one hand-off's with the rest waiting" + ratioText(h.Ratio) + ".",
		Anchor: figureAnchor("per-acquire"), Table: t}
}

// theoryMark is the wake-ups theory predicts per hand-off, ✓ when the
// burst's count equals it exactly (a burst's counts are exact).
func theoryMark(t *judge.TheoryCheck) string {
	if t == nil {
		return "—"
	}
	mark := "✓"
	switch {
	case t.Exact:
	case t.Want <= 0:
		mark = fmt.Sprintf("✗ (measured %s)", commas(t.Got))
	default:
		mark = fmt.Sprintf("✗ (measured %+d, %+.1f%%)", t.Got-t.Want, 100*float64(t.Got-t.Want)/float64(t.Want))
	}
	return fmt.Sprintf("%.2f (%s) %s", t.PerHandoff, t.Formula, mark)
}

func serverText(s *judge.ServerCheck) string {
	switch {
	case s == nil:
		return "—"
	case s.Internal:
		return fmt.Sprintf("server fired %s watches to its own waiters (the queue is the server's)", commas(s.Fired))
	case s.Sharded:
		return fmt.Sprintf("server fired %s watches for all shards (merge checks them)", commas(s.Fired))
	case s.Received == nil:
		return fmt.Sprintf("server fired %s watches", commas(s.Fired))
	case s.Agrees():
		return fmt.Sprintf("server fired %s watches, all received ✓", commas(s.Fired))
	}
	return fmt.Sprintf("server fired %s watches but clients received %s ✗", commas(s.Fired), commas(*s.Received))
}

func ratioText(r *judge.WakeRatio) string {
	if r == nil {
		return ""
	}
	return fmt.Sprintf(" — %s wakes %.0f× as many waiters per hand-off as %s at up to %d clients", r.Hi, r.Times, r.Lo, r.UpTo)
}

// growthText is a fitted exponent of n with its 95 % interval, n^1.00
// [0.98, 1.02]; "—" where the interval is unknown, since an exponent from
// one burst at each of two client counts is a line through two points.
func growthText(g *result.Growth) string {
	if g == nil || math.IsNaN(g.Low) {
		return "—"
	}
	return fmt.Sprintf("n^%.2f [%.2f, %.2f]", g.Exponent, g.Low, g.High)
}

func optional(v *float64, f func(float64) string) string {
	if v == nil {
		return "unknown"
	}
	return f(*v)
}

// micros prints a time in µs with a unit that suits it.
func micros(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%.2f s", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%.2f ms", us/1e3)
	}
	return fmt.Sprintf("%.0f µs", us)
}
