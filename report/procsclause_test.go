package report

import (
	"testing"

	"github.com/lockbench/lockbench/result"
)

// The Limit line says once what lockbench's cells kept for their own
// threads, most common first; cells that tried nothing are not counted.
func TestProcsClauseCountsWhatCellsKept(t *testing.T) {
	cell := func(procs int, why string, undecided bool) Cell {
		return Cell{Generator: &result.Generator{Procs: procs, ProcsWhy: why, ProcsUndecided: undecided}}
	}
	cells := []Cell{cell(1, "tried, kept 1", false), cell(2, "tried, kept 2", true), cell(2, "", false), cell(2, "tried, kept 2", false), {}}
	want := " — its servers sharing the machine, lockbench tried its own threads as its cells warmed up and kept GOMAXPROCS 2 in 2 cells (1 of them as the trial could not tell), 1 in 1 cell"
	if got := procsClause(cells); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := procsClause([]Cell{cell(2, "", false), {}}); got != "" {
		t.Errorf("nothing tried, yet %q", got)
	}
}
