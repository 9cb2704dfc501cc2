package report

import (
	"testing"

	"github.com/lockbench/lockbench/judge"
)

// The Limit line says once what lockbench's cells kept for their own
// threads, in the order judge gives (most common first).
func TestProcsClauseSaysWhatCellsKept(t *testing.T) {
	kept := []judge.ProcsKept{{Procs: 2, Cells: 2, Undecided: 1}, {Procs: 1, Cells: 1}}
	want := " — its servers sharing the machine, lockbench tried its own threads as its cells warmed up and kept GOMAXPROCS 2 in 2 cells (1 of them as the trial could not tell), 1 in 1 cell"
	if got := procsClause(kept); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := procsClause(nil); got != "" {
		t.Errorf("nothing tried, yet %q", got)
	}
}
