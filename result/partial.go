package result

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Partial says what a results directory that is not a whole run lacks. A
// merge given --partial writes it in summary.json and meta.json, and
// every rendering of the directory shows it: a figure of a partial run is
// a whole cell's, but the run it comes from is not.
type Partial struct {
	// Reason is one line on why the results are partial.
	Reason string `json:"reason"`
	// Shards lists the shards that did not finish every cell (a merge).
	Shards []int `json:"incomplete_shards,omitempty"`
	// Missing lists each cell left out and why.
	Missing []MissingCell `json:"missing_cells"`
}

// MissingCell is a cell of the plan that a partial result lacks.
type MissingCell struct {
	Cell string `json:"cell"`
	Why  string `json:"why"`
}

// Label is the partial results' headline, naming the missing cells.
func (p *Partial) Label() string {
	if p == nil {
		return ""
	}
	cells := make([]string, len(p.Missing))
	for i, m := range p.Missing {
		cells[i] = m.Cell
	}
	return fmt.Sprintf("PARTIAL: %s; missing %s", p.Reason, plural(len(cells), "cell")+": "+strings.Join(cells, ", "))
}

// plural is "1 cell" or "3 cells".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// PlanCells lists the cells meta.json's plan asks for, in run order
// (implementation, scenario, client count). A fault scenario (by
// ScenarioKinds) is one cell at the first count, at least 2, as the plan
// runs it. A ramp's stairs are not known from meta.json alone: for a ramp
// it is nil.
func PlanCells(m Meta) []Cell {
	if m.Ramp != "" || len(m.Clients) == 0 {
		return nil
	}
	var out []Cell
	for _, i := range m.Impls {
		for _, s := range m.Scenarios {
			counts := m.Clients
			if m.ScenarioKinds[s] == KindFault {
				counts = []int{max(m.Clients[0], 2)}
			}
			for _, n := range counts {
				out = append(out, Cell{Impl: i, Scenario: s, Clients: n})
			}
		}
	}
	return out
}

// Unfinished says of cell c in dir whether a writer left its files
// behind unfinished (a process killed or a disk full mid-cell), naming
// the file; "" when none.
func Unfinished(dir string, c Cell) string {
	for _, ext := range []string{HlogExt, GrantsExt} {
		for _, rel := range []string{CellRel(dir, c, ext), CellFile(c) + ext} {
			p := filepath.Join(dir, rel) + PartialExt
			if _, err := os.Stat(p); err == nil || !errors.Is(err, os.ErrNotExist) {
				return rel + PartialExt
			}
		}
	}
	return ""
}

// MissingFromRun lists the cells of a single run's plan that dir's
// summary lacks, for a run that ended early: one whose summary records a
// failure, or that left a cell's files behind without the cell (a process
// killed, or a disk too full to write summary.json, cannot record its
// failure). A run that ended as asked lacks nothing: a cell of the plan
// it skipped did not apply. A summary that already says what it lacks
// (a partial merge) is returned as it is.
func MissingFromRun(dir string, m Meta, sum *Summary) *Partial {
	if sum.Partial != nil {
		return sum.Partial
	}
	var missing []MissingCell
	ended := sum.Failure != ""
	for _, c := range PlanCells(m) {
		if slices.ContainsFunc(sum.Cells, func(d Cell) bool { return d.Key() == c.Key() }) {
			continue
		}
		why := "not run: the run ended first"
		if f := Unfinished(dir, c); f != "" {
			why, ended = "stopped mid-cell ("+f+" left unfinished)", true
		} else if _, err := os.Stat(CellPath(dir, c, HlogExt)); err == nil {
			why, ended = "measured, but summary.json could not record it (its "+CellRel(dir, c, HlogExt)+" is whole)", true
		}
		missing = append(missing, MissingCell{Cell: c.Key(), Why: why})
	}
	if !ended || len(missing) == 0 {
		return nil
	}
	reason := "the run ended early"
	if sum.Failure != "" {
		reason += ": " + firstLine(sum.Failure)
	}
	return &Partial{Reason: reason, Missing: missing}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
