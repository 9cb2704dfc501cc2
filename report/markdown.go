package report

import (
	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"

	"fmt"
	"strings"
)

// summaryRow is a cell as the markdown and HTML tables show it.
type summaryRow struct {
	Impl, Scenario, Clients, PerS       string
	P50, P99, P999, Errors              string
	Retries, Notif, Wakeups, Violations string
	Unsafe                              bool
}

// summaryRows lays cells out for the PR table; wakeups reports whether
// any cell has wake-ups or a theory for them, so the column is worth
// showing.
func summaryRows(cells []Cell) (rows []summaryRow, wakeups bool) {
	for _, c := range cells {
		r := summaryRow{
			Impl: c.Impl, Scenario: c.Scenario, Clients: fmt.Sprint(c.Clients),
			PerS: rateInterval(c),
			P50:  result.Dur(c.AcquireLatencyUs.P50), P99: p99Interval(c), P999: result.Dur(c.AcquireLatencyUs.P999),
			Errors:  commas(c.Errors),
			Retries: perAcq(c.RetriesPerAcquire), Notif: perAcq(c.NotificationsPerAcquire),
			Wakeups: "–", Violations: commas(c.SafetyViolations), Unsafe: judge.CellSafety(c).Bad(),
		}
		if n, _ := releaseWakeups(c); n > 0 || c.TheoryWakeups != nil {
			wakeups = true
			r.Wakeups = commas(n)
			if c.TheoryWakeups != nil {
				r.Wakeups += " / " + commas(*c.TheoryWakeups)
			}
		}
		rows = append(rows, r)
	}
	return rows, wakeups
}

// markdown renders summary.md: the headlines, the table and, with an SLO,
// the capacity found.
func markdown(meta result.Meta, cells []Cell, slo *SLO, partial *result.Partial) []byte {
	var b strings.Builder
	if partial != nil {
		b.WriteString("## " + PartialMark + "lockbench results\n\n")
		fmt.Fprintf(&b, "**%s.**\n\n", mdEscape(partial.Reason))
		for _, m := range partial.Missing {
			fmt.Fprintf(&b, "- missing %s: %s\n", mdEscape(m.Cell), mdEscape(m.Why))
		}
		b.WriteString("\n")
	} else {
		b.WriteString("## lockbench results\n\n")
	}
	if d := meta.Describe(); d != "" {
		fmt.Fprintf(&b, "_%s._\n\n", d)
	}
	if s := serversText(meta); s != "" {
		fmt.Fprintf(&b, "_Servers: %s._\n\n", mdEscape(s))
	}
	if s := snapshotText(cells); s != "" {
		fmt.Fprintf(&b, "_%s._\n\n", mdEscape(s))
	}
	mdVerdict(&b, withServers(Verdict(cells, slo), meta))
	rows, wakeups := summaryRows(cells)
	if partial != nil {
		b.WriteString("\n### " + PartialMark + "Results\n")
	}
	head := []string{"impl", "scenario", "clients", "acq/s", "p50", "p99", "p99.9", "errors", "retries/acq", "notif/acq"}
	align := []string{":--", ":--", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:"}
	if wakeups {
		head = append(head, "wake-ups / theory")
		align = append(align, "--:")
	}
	head = append(head, "violations")
	align = append(align, "--:")
	b.WriteString("\n")
	mdRow(&b, head)
	mdRow(&b, align)
	for _, r := range rows {
		impl := mdEscape(r.Impl)
		if r.Unsafe {
			impl = "**" + impl + " ⚠ UNSAFE**"
		}
		f := []string{impl, mdEscape(r.Scenario), r.Clients, r.PerS, r.P50, r.P99, r.P999, r.Errors, r.Retries, r.Notif}
		if wakeups {
			f = append(f, r.Wakeups)
		}
		f = append(f, r.Violations)
		mdRow(&b, f)
	}
	if wakeups {
		b.WriteString("\nWake-ups are release wake-ups where counted; theory is n(n−1)/2 when every waiter watches every change, n−1 with a predecessor watch.\n")
	}
	if anyRounds(cells) {
		b.WriteString("\n" + bracketsNote + "\n")
	}
	mdLatency(&b, cells, partialMark(partial))
	mdFaults(&b, cells, partialMark(partial))
	mdKnownIssues(&b, cells, partialMark(partial))
	if slo != nil {
		fmt.Fprintf(&b, "\n### %sBest client count tried at %s ≤ %v\n\n", partialMark(partial), slo.Label(), slo.Limit)
		mdRow(&b, []string{"impl", "scenario", "capacity"})
		mdRow(&b, []string{":--", ":--", ":--"})
		for _, r := range judge.Capacity(cells, *slo) {
			mdRow(&b, []string{mdEscape(r.Impl), mdEscape(r.Scenario), mdEscape(DescribeCapacity(r, *slo))})
		}
		mdBreaches(&b, cells, *slo)
	}
	return []byte(b.String())
}

func mdRow(b *strings.Builder, fields []string) {
	b.WriteString("| " + strings.Join(fields, " | ") + " |\n")
}

// mdEscape keeps a value from breaking the table or turning into markup.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;").Replace(s)
}

// mdLatency writes every cell's acquire-latency percentiles, the ones the
// main table leaves out included.
func mdLatency(b *strings.Builder, cells []Cell, mark string) {
	b.WriteString("\n### " + mark + "Acquire latency\n\n")
	mdRow(b, []string{"impl", "scenario", "clients", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "max"})
	mdRow(b, []string{":--", ":--", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:"})
	for _, c := range cells {
		l := c.AcquireLatencyUs
		f := []string{mdEscape(c.Impl), mdEscape(c.Scenario), fmt.Sprint(c.Clients)}
		for _, v := range []float64{l.P50, l.P90, l.P95, l.P99, l.P999, l.P9999, l.Max} {
			f = append(f, result.Dur(v))
		}
		mdRow(b, f)
	}
}

// mdBreaches lists the cells that did not meet the SLO's thresholds.
func mdBreaches(b *strings.Builder, cells []Cell, slo SLO) {
	breaches := judge.Breaches(cells, slo)
	if len(breaches) == 0 {
		fmt.Fprintf(b, "\nEvery cell met %s.\n", mdEscape(slo.String()))
		return
	}
	fmt.Fprintf(b, "\n### Cells that missed %s\n\n", mdEscape(slo.String()))
	mdRow(b, []string{"cell", "threshold", "measured"})
	mdRow(b, []string{":--", ":--", ":--"})
	for _, x := range breaches {
		mdRow(b, []string{mdEscape(x.Cell), mdEscape(x.Threshold), mdEscape(BreachWords(x))})
	}
}

// partialMark is PartialMark for a partial result, else "".
func partialMark(p *result.Partial) string {
	if p == nil {
		return ""
	}
	return PartialMark
}

// mdVerdict writes the verdict lines: each question and its answer, and
// its table where it has one.
func mdVerdict(b *strings.Builder, lines []VerdictLine) {
	for _, v := range lines {
		q := mdEscape(v.Question)
		if v.Bad {
			q = "⚠ " + q
		}
		fmt.Fprintf(b, "- **%s:** %s\n", q, mdEscape(v.Answer))
		if t := v.Table; t != nil {
			b.WriteString("\n")
			mdRow(b, t.Header)
			align := make([]string, len(t.Header))
			for i := range align {
				align[i] = ":--"
			}
			mdRow(b, align)
			for _, r := range t.Rows {
				cells := make([]string, len(r))
				for i, c := range r {
					cells[i] = mdEscape(c)
				}
				mdRow(b, cells)
			}
			b.WriteString("\n")
		}
	}
}

// mdFaults writes each fault cell's own account, the sentence its typed
// figures read as (FaultSentence), one line a cell.
func mdFaults(b *strings.Builder, cells []Cell, mark string) {
	first := true
	for _, c := range cells {
		if c.KindOf() != result.KindFault {
			continue
		}
		s := FaultSentence(c)
		if s == "" {
			continue
		}
		if first {
			fmt.Fprintf(b, "\n### %sFaults\n\n", mark)
			first = false
		}
		fmt.Fprintf(b, "- **%s %s** (%d clients): %s\n", mdEscape(c.Impl), mdEscape(c.Scenario), c.Clients,
			mdEscape(strings.TrimPrefix(s, c.Impl+": ")))
	}
}
