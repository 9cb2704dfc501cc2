package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
)

// SafetyFile is the Safety section: one row per lock and scenario.
const SafetyFile = "safety.md"

// safetyOrder is the order of the scenarios in the Safety table: the
// load first, then the faults, each as hard as the one before or more.
var safetyOrder = []string{"hot", "pause", "freeze", "crash", "partition", "failover"}

// safetyTable renders what the cells' safety checks found, lock × scenario:
// overlaps, token regressions, stale writes accepted, lost updates, the
// linearizability verdict and what the check cost. It only formats the
// figures in result.Safety; judging them is done where they are derived.
func safetyTable(cells []result.Cell) []byte {
	var rows []result.Cell
	for _, c := range cells {
		if c.Safety != nil {
			rows = append(rows, c)
		}
	}
	rank := func(s string) int {
		if i := slices.Index(safetyOrder, s); i >= 0 {
			return i
		}
		return len(safetyOrder)
	}
	slices.SortStableFunc(rows, func(a, b result.Cell) int {
		return cmp.Or(cmp.Compare(a.Impl, b.Impl), cmp.Compare(rank(a.Scenario), rank(b.Scenario)), cmp.Compare(a.Scenario, b.Scenario))
	})
	var b strings.Builder
	b.WriteString("# Safety\n\n")
	if len(rows) == 0 {
		b.WriteString("No cell recorded safety figures.\n")
		return []byte(b.String())
	}
	b.WriteString("| lock | scenario | clients | overlaps | token regressions | tokens | guarded writes | stale writes accepted (fenced / unfenced) | refused by the fence | lost updates (fenced / unfenced) | linearizable | lease expiries | operations | checking time |\n")
	b.WriteString("|---|---|--:|--:|--:|---|--:|--:|--:|--:|---|--:|--:|--:|\n")
	var notes []string
	for _, c := range rows {
		s := c.Safety
		writes, stale, refused, lost := guardTexts(s)
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			c.Impl, c.Scenario, c.Clients, commas(s.Overlaps), commas(s.TokenRegressions), cmp.Or(string(s.Tokens), "–"),
			writes, stale, refused, lost, verdictText(s), commas(s.LeaseExpiries), opsText(s), checkText(s))
		if s.GuardNote != "" {
			notes = append(notes, fmt.Sprintf("%s %s: no guarded register: %s", c.Impl, c.Scenario, s.GuardNote))
		}
		if s.GuardErrors > 0 {
			notes = append(notes, fmt.Sprintf("%s %s: %s to the guarded register failed or timed out, their outcome unknown and in no other figure",
				c.Impl, c.Scenario, plural(s.GuardErrors, "access")))
		}
		if w := s.Illegal; w != nil {
			n := fmt.Sprintf("%s %s: shortest illegal window on %s (phase %d), %.3f–%.3f s after the start, %s of clients %v; no order explains %q",
				c.Impl, c.Scenario, w.Lock, w.Phase, w.FromS, w.ToS, plural(int64(w.Ops), "operation"), w.Clients, w.Stuck)
			if w.File != "" {
				n += "; see " + w.File
			}
			notes = append(notes, n)
		}
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "\n- %s", n)
	}
	if len(notes) > 0 {
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// guardTexts are the guarded register's cells of a row: the writes, the
// stale writes accepted, those the fence refused and the lost updates —
// the fenced counter's shown only where holders had a token to show it,
// for without one it fences nothing.
func guardTexts(s *result.Safety) (writes, stale, refused, lost string) {
	if !s.Guarded {
		return "–", "–", "–", "–"
	}
	fenced := func(n int64) string {
		if s.Tokens == result.TokensNone || s.Tokens == "" {
			return "–"
		}
		return commas(n)
	}
	return commas(s.GuardedWrites), fenced(s.StaleWritesFenced) + " / " + commas(s.StaleWritesUnfenced),
		fenced(s.StaleWritesRefused), fenced(s.LostUpdatesFenced) + " / " + commas(s.LostUpdates)
}

func verdictText(s *result.Safety) string {
	switch s.Linearizable {
	case result.Linearizable:
		return "yes"
	case result.NotLinearizable:
		return "**NO**"
	case result.VerdictUnknown:
		return "unknown (time budget spent)"
	case result.NotChecked:
		return "not checked (no history recorded: --history=false)"
	}
	return "–"
}

func opsText(s *result.Safety) string {
	t := commas(s.Ops)
	if s.Unknown > 0 {
		t += fmt.Sprintf(" (%s unknown)", commas(s.Unknown))
	}
	if s.Dropped > 0 {
		t += fmt.Sprintf(", %s past the log", commas(s.Dropped))
	}
	return t
}

func checkText(s *result.Safety) string {
	if s.Linearizable == "" {
		return "–"
	}
	return fmt.Sprintf("%.2f s, %.0f MB in %s", s.CheckMs/1e3, s.CheckAllocMB, plural(int64(s.Windows), "window"))
}

// violationWords say a cell's violations: by kind where its figures split
// them ("1 overlap, 2 token regressions"), else their count alone.
func violationWords(u judge.Unsafety) string {
	if u.Overlaps == 0 && u.TokenRegressions == 0 {
		return commas(u.Other)
	}
	var w []string
	for _, k := range []struct {
		n    int64
		name string
	}{{u.Overlaps, "overlap"}, {u.TokenRegressions, "token regression"}, {u.Other, "other violation"}} {
		if k.n > 0 {
			w = append(w, plural(k.n, k.name))
		}
	}
	return strings.Join(w, ", ")
}

// UnsafetyWords name everything that broke a cell's mutual exclusion,
// each kind with its count: "1 overlap, 3 lost updates of the guarded
// counter, a history that is not linearizable"; "" for a safe cell.
func UnsafetyWords(u judge.Unsafety) string {
	var w []string
	if u.Violations() > 0 {
		if u.Overlaps == 0 && u.TokenRegressions == 0 {
			w = append(w, plural(u.Other, "violation"))
		} else {
			w = append(w, violationWords(u))
		}
	}
	if u.LostUpdates > 0 {
		w = append(w, plural(u.LostUpdates, "lost update")+" of the guarded counter")
	}
	if u.NotLinearizable {
		w = append(w, "a history that is not linearizable")
	}
	return strings.Join(w, ", ")
}
