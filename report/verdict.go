package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
)

// VerdictLine is the answer to one question a run can answer, with where
// on report.html its evidence is: a rendering of one of judge's findings.
type VerdictLine struct {
	Question string // "Safety", "Herd cost", "Best client count tried (hot)", …
	Answer   string
	// Anchor is the id of the section or figure holding the evidence.
	Anchor string
	// Bad marks an answer that is a failure: unsafe, or no capacity.
	Bad bool
	// Table, if set, gives the answer's figures as a small table.
	Table *VerdictTable
}

// VerdictTable is a verdict given as a small table, beside its sentence.
type VerdictTable struct {
	Header []string
	Rows   [][]string
}

// DefaultSLO is what a run's best client count is judged against when it
// names none (judge.DefaultSLO).
var DefaultSLO = judge.DefaultSLO

// Anchors of report.html's sections, for VerdictLine.Anchor.
const (
	anchorResults  = "results"
	anchorCapacity = "capacity"
	anchorOpen     = "open-loop"
	anchorFaults   = "faults"
)

// figureAnchor is the id report.html gives the figure of that name.
func figureAnchor(name string) string { return "fig-" + name }

// Verdict answers, one line each, the questions the cells can answer —
// judge.Judge decides, this renders: is the lock safe, what does each
// lock's loop serve, what does a release cost in wake-ups against theory,
// how many clients of those tried met the SLO (slo, or DefaultSLO when
// nil), what a fault costs, where an open loop saturates, and whether
// lockbench, the servers or the machine's cores were the limit. A question
// the run has no data for gets no line.
func Verdict(cells []Cell, slo *SLO) []VerdictLine {
	if len(cells) == 0 {
		return nil
	}
	return Lines(judge.Judge(cells, slo))
}

// Lines renders findings as verdict lines, in the order a reader asks.
func Lines(f judge.Findings) []VerdictLine {
	out := []VerdictLine{safetyLine(f.Safety)}
	if v, ok := livelockLine(f.Livelocks); ok {
		out = append(out, v)
	}
	if v, ok := throughputLine(f.Throughput); ok {
		out = append(out, v)
	}
	switch {
	case f.Herd != nil:
		out = append(out, herdLine(*f.Herd))
	case f.LoopHerd != nil:
		out = append(out, loopHerdLine(*f.LoopHerd))
	}
	if f.Gap != nil {
		out = append(out, gapLine(*f.Gap))
	}
	for _, b := range f.BestTried {
		out = append(out, bestTriedLine(b, f.SLO, f.DefaultSLOUsed))
	}
	if f.Open != nil {
		out = append(out, openLine(*f.Open))
	}
	if len(f.Faults) > 0 {
		out = append(out, faultLine(f.Faults))
	}
	if f.Rounds != nil {
		if v, ok := roundsLine(*f.Rounds); ok {
			out = append(out, v)
		}
	}
	switch {
	case f.Limit != nil:
		l := limitLine(*f.Limit)
		if f.Rounds != nil {
			l.Answer += "; " + noiseClause(f.Rounds.Noise)
		}
		out = append(out, l)
	case f.Rounds != nil:
		out = append(out, VerdictLine{Question: "Limit", Anchor: anchorResults, Answer: noiseClause(f.Rounds.Noise)})
	}
	return out
}

func refText(r judge.CellRef) string {
	return fmt.Sprintf("%s %s at %s", r.Impl, r.Scenario, plural(int64(r.Clients), "client"))
}

func safetyLine(s judge.Safety) VerdictLine {
	v := VerdictLine{Question: "Safety", Anchor: anchorResults, Bad: s.Bad()}
	if s.Bad() {
		var clauses, where []string
		for _, u := range s.Unsafe {
			if u.Violations() > 0 {
				where = append(where, fmt.Sprintf("%s (%s)", refText(u.CellRef), violationWords(u)))
			}
		}
		if len(where) > 0 {
			clauses = append(clauses, fmt.Sprintf("%s in %s: %s", plural(s.Violations, "violation"), plural(s.Grants, "grant"), strings.Join(where, ", ")))
		}
		if len(s.LostUpdates) > 0 {
			lost := make([]string, len(s.LostUpdates))
			for i, u := range s.LostUpdates {
				lost[i] = fmt.Sprintf("%s (%d)", refText(u.CellRef), u.N)
			}
			clauses = append(clauses, fmt.Sprintf("%s of the guarded counter: %s", plural(s.Lost(), "lost update"), strings.Join(lost, ", ")))
		}
		if len(s.NotLinearizable) > 0 {
			refs := make([]string, len(s.NotLinearizable))
			for i, r := range s.NotLinearizable {
				refs[i] = refText(r)
			}
			clauses = append(clauses, "a history that is not linearizable (no order of its operations explains it): "+strings.Join(refs, ", "))
		}
		v.Answer = "UNSAFE — " + strings.Join(clauses, "; ")
		if len(where) == 0 {
			v.Answer += " (" + plural(s.Grants, "grant") + ")"
		}
	} else {
		v.Answer = fmt.Sprintf("✓ 0 violations in %s", plural(s.Grants, "grant"))
	}
	if s.Fenced > 0 {
		by := make([]string, len(s.FencedBy))
		for i, r := range s.FencedBy {
			by[i] = r.Impl + " " + r.Scenario
		}
		v.Answer += fmt.Sprintf("; %s, fenced (%s): the token turned the late write away", plural(s.Fenced, "stale grant"), strings.Join(by, ", "))
	}
	if len(s.PossibleOverlaps) > 0 {
		var n int64
		where := make([]string, len(s.PossibleOverlaps))
		for i, p := range s.PossibleOverlaps {
			n += p.N
			where[i] = fmt.Sprintf("%s %s with %d clients", p.Impl, p.Scenario, p.Clients)
		}
		v.Answer += fmt.Sprintf("; %d possible overlaps within the shards' clock skew (%s)", n, strings.Join(where, ", "))
	}
	return v
}

func livelockLine(ls []judge.Livelock) (VerdictLine, bool) {
	if len(ls) == 0 {
		return VerdictLine{}, false
	}
	t := &VerdictTable{Header: []string{"lock", "scenario", "clients", "no grant for", "ended at", "attempts", "split votes", "errors"}}
	for _, l := range ls {
		f := l.Figures
		t.Rows = append(t.Rows, []string{l.Impl, l.Scenario, commas(int64(l.Clients)), result.Dur(f.LimitS * 1e6),
			fmt.Sprintf("%.1fs", f.AtS), commas(f.Attempts), commas(f.SplitVotes), commas(f.Errors)})
	}
	return VerdictLine{Question: "Livelock", Bad: true, Anchor: anchorResults, Table: t,
		Answer: fmt.Sprintf("LIVELOCK in %s: clients kept trying and nobody was granted the lock", plural(int64(len(ls)), "cell"))}, true
}

// throughputLine is each lock's best rate per scenario, and what an
// acquisition cost at its largest client count, as a table.
func throughputLine(ts []judge.Throughput) (VerdictLine, bool) {
	if len(ts) == 0 {
		return VerdictLine{}, false
	}
	t := &VerdictTable{Header: []string{"lock", "scenario", "best acq/s", "at", "p99 there", "at most clients: wake-ups / acq (theory)", "retries / acq", "errors"}}
	for _, r := range ts {
		if !r.Measured {
			t.Rows = append(t.Rows, []string{r.Impl, r.Scenario, "none", "—", "—", "—", "—", commas(r.Errors)})
			continue
		}
		wake := "—"
		if w := r.Wake; w != nil {
			wake = fmt.Sprintf("%s %s at %d", perAcq(w.PerAcquire), countedWord(w.Counted), r.Largest)
			if w.TheoryPerHandoff != nil {
				wake += fmt.Sprintf(" (%s)", theoryLabel(w.Formula, *w.TheoryPerHandoff))
			}
		}
		retries := "—"
		if r.Retries > 0 {
			retries = perAcq(r.Retries)
		}
		t.Rows = append(t.Rows, []string{r.Impl, r.Scenario, commas(round(r.BestPerS)), plural(int64(r.Best.Clients), "client"),
			result.Dur(r.BestP99), wake, retries, commas(r.Errors)})
	}
	return VerdictLine{Question: "Throughput", Anchor: anchorResults, Table: t,
		Answer: "each lock's best rate per scenario, and what an acquisition cost at its most clients"}, true
}

func countedWord(counted string) string {
	if counted == result.CountedReleaseWakeups {
		return "release wake-ups"
	}
	return "notifications"
}

// theoryLabel is a per-hand-off theory as a sentence shows it: its
// formula, and the figure where the formula depends on n ("n−1 = 15").
func theoryLabel(formula string, t float64) string {
	if !strings.Contains(formula, "n") {
		return formula
	}
	return fmt.Sprintf("%s = %s", formula, commas(round(t)))
}

// WriteVerdict prints the verdict as text under a results table, within
// its TableWidth columns: a question a paragraph, and the table behind an
// answer indented below it — in columns where they fit, else a row a
// paragraph, each figure named.
func WriteVerdict(w io.Writer, cells []Cell, slo *SLO) error {
	lines := Verdict(cells, slo)
	if len(lines) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("\nverdict:\n")
	for _, v := range lines {
		mark := ""
		if v.Bad {
			mark = "⚠ "
		}
		b.WriteString(wrap(mark+v.Question+": "+v.Answer, "  ", "    ", TableWidth))
		if t := v.Table; t != nil {
			b.WriteString(textTable(t))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// textTable is a verdict's table as text within TableWidth.
func textTable(t *VerdictTable) string {
	var cols strings.Builder
	tw := tabwriter.NewWriter(&cols, 0, 0, 2, ' ', 0)
	for _, r := range append([][]string{t.Header}, t.Rows...) {
		fmt.Fprintf(tw, "    %s\n", strings.Join(r, "\t"))
	}
	tw.Flush()
	fits := true
	for _, l := range strings.Split(strings.TrimRight(cols.String(), "\n"), "\n") {
		fits = fits && utf8.RuneCountInString(strings.TrimRight(l, " ")) <= TableWidth
	}
	if fits {
		return cols.String()
	}
	var b strings.Builder
	for _, r := range t.Rows {
		var fs []string
		for i := 1; i < len(r) && i < len(t.Header); i++ {
			fs = append(fs, t.Header[i]+" "+r[i])
		}
		b.WriteString(wrap(r[0]+" — "+strings.Join(fs, "; "), "    ", "      ", TableWidth))
	}
	return b.String()
}
