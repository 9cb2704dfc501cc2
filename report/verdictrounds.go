package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
)

// roundsLine answers "side by side": each ratio of a row over the first
// in its scenario and client count, with its interval from the paired
// rounds, called a difference only where the interval excludes 1.
func roundsLine(r judge.Rounds) (VerdictLine, bool) {
	if len(r.Ratios) == 0 {
		return VerdictLine{}, false
	}
	v := VerdictLine{Question: "Side by side", Anchor: anchorResults,
		Table: &VerdictTable{Header: []string{"rows", "figure", "ratio [95 % interval]", "verdict"}}}
	differ := 0
	for _, x := range r.Ratios {
		if x.Differs {
			differ++
		}
		v.Table.Rows = append(v.Table.Rows, []string{
			fmt.Sprintf("%s / %s, %s ×%d", x.A.Impl, x.B.Impl, x.A.Scenario, x.A.Clients),
			string(x.Figure), ratioInterval(x.Ratio), ratioVerdict(x)})
	}
	v.Answer = fmt.Sprintf("%d of %d paired ratios differ from 1 (95 %% interval over the rounds)", differ, len(r.Ratios))
	if len(r.Ratios) > 0 {
		x := r.Ratios[0]
		v.Answer += fmt.Sprintf("; e.g. %s %s %s %s: %s", x.A.Impl, ratioInterval(x.Ratio), x.B.Impl, x.Figure, ratioVerdict(x))
	}
	return v, true
}

// ratioInterval is "1.07× [1.02, 1.12]", or the ratio and why it has no
// interval.
func ratioInterval(e result.Estimate) string {
	if !e.HasInterval() {
		return fmt.Sprintf("%.2f× (%s)", e.Point, noInterval(e))
	}
	return fmt.Sprintf("%.2f× [%.2f, %.2f]", e.Point, e.Low, e.High)
}

func ratioVerdict(x judge.Ratio) string {
	switch {
	case x.Differs:
		return "differs"
	case math.IsInf(x.CouldTell, 0):
		return "cannot tell: " + noInterval(x.Ratio)
	}
	return fmt.Sprintf("no difference found; this run could tell ±%.0f %%", 100*x.CouldTell)
}

// noInterval says why an estimate has no interval.
func noInterval(e result.Estimate) string {
	if len(e.Rounds) < 2 {
		return "one round, no interval: run with --repeat"
	}
	return e.Method
}

// noiseClause is the noise floor the rounds measured, for the Limit line.
func noiseClause(n judge.Noise) string {
	s := fmt.Sprintf("noise floor: one row's acq/s moved ±%.1f %% from round to round (median of %s; largest ±%.1f %%, %s)",
		100*n.Median, plural(int64(n.Cells), "cell"), 100*n.Largest, refText(n.At))
	switch {
	case n.Advised == 0:
	case n.Advised > result.MaxRoundsAdvised:
		s += fmt.Sprintf("; no count of rounds up to %d would give ±%.0f %%", result.MaxRoundsAdvised, 100*judge.Precision)
	case n.Advised <= n.Rounds:
		s += fmt.Sprintf("; %d rounds gave ±%.0f %% or better", n.Rounds, 100*judge.Precision)
	default:
		s += fmt.Sprintf("; --repeat %d would give ±%.0f %% (this run: %d)", n.Advised, 100*judge.Precision, n.Rounds)
	}
	return s
}

// roundsNote is the second line of a cell measured in rounds: each timed
// figure's point and 95 % interval, and how they were drawn.
func roundsNote(c Cell) string {
	r := c.Rounds
	if r == nil {
		return ""
	}
	rate := func(e result.Estimate) string {
		return fmt.Sprintf("%s [%s, %s]", commas(round(e.Point)), commas(round(e.Low)), commas(round(e.High)))
	}
	s := fmt.Sprintf("%d rounds (%s, 95 %%): acq/s %s; p50 %s; p99 %s; p99.9 %s", r.N, r.AcquiresPerS.Method,
		rate(r.AcquiresPerS), durInterval(r.P50), durInterval(r.P99), durInterval(r.P999))
	if r.GapP50 != nil {
		s += "; gap p50 " + durInterval(*r.GapP50)
	}
	if r.ServerCPUUs != nil {
		s += "; server CPU/acq " + durInterval(*r.ServerCPUUs)
	}
	if r.LockbenchCPUUs != nil {
		s += "; lockbench CPU/acq " + durInterval(*r.LockbenchCPUUs)
	}
	return s
}

// durInterval is a time estimate in µs as "7.3ms [6.9ms, 8.1ms]".
func durInterval(e result.Estimate) string {
	if !e.HasInterval() {
		return result.Dur(e.Point)
	}
	return fmt.Sprintf("%s [%s, %s]", result.Dur(e.Point), result.Dur(e.Low), result.Dur(e.High))
}

// rateInterval is a table cell's acq/s — the cell's own, over every
// round's acquisitions, as every other section gives it — with the 95 %
// interval its rounds give, "1,122 [1,050–1,190]"; the figure alone for a
// cell of one round.
func rateInterval(c Cell) string {
	if c.Rounds == nil || !c.Rounds.AcquiresPerS.HasInterval() {
		return commas(round(c.AcquiresPerS))
	}
	e := c.Rounds.AcquiresPerS
	return fmt.Sprintf("%s [%s–%s]", commas(round(c.AcquiresPerS)), commas(round(e.Low)), commas(round(e.High)))
}

// p99Interval is a table cell's p99, with its rounds' interval as
// rateInterval; a p99 in the gap of a bimodal distribution is given as
// the range around it. The p99 is the cell's own, from the histogram of
// every round, so that it stays in order with the p95 and p99.9 beside
// it (a median of the rounds' p99s need not).
func p99Interval(c Cell) string {
	if l := c.AcquireLatencyUs; judge.UnstableP99(l) {
		return fmt.Sprintf("unstable: %s–%s", result.Dur(l.P985), result.Dur(l.P995))
	}
	if c.Rounds == nil || !c.Rounds.P99.HasInterval() {
		return result.Dur(c.AcquireLatencyUs.P99)
	}
	e := c.Rounds.P99
	return fmt.Sprintf("%s [%s–%s]", result.Dur(c.AcquireLatencyUs.P99), result.Dur(e.Low), result.Dur(e.High))
}

// unstableNote warns of a p99 that sits in the gap of a bimodal
// distribution, for a row's notes.
func unstableNote(c Cell) string {
	l := c.AcquireLatencyUs
	if !judge.UnstableP99(l) {
		return ""
	}
	return fmt.Sprintf("! p99 unstable: it sits in the gap of a bimodal distribution (p98.5 %s, p99.5 %s): read it as that range, not a point",
		result.Dur(l.P985), result.Dur(l.P995))
}

// bracketsNote says what a table's brackets are, under a table that has any.
const bracketsNote = "[low–high]: the 95 % interval of the figure over the cell's rounds (--repeat); the figure before it is the cell's own, over every round's acquisitions."

// anyRounds reports whether a cell was measured in rounds.
func anyRounds(cells []Cell) bool {
	return slices.ContainsFunc(cells, func(c Cell) bool { return c.Rounds != nil })
}
