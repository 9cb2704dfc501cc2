package judge

import (
	"reflect"
	"testing"

	"github.com/lockbench/lockbench/result"
)

// The Limit line's GOMAXPROCS clause counts what the cells' trials kept,
// most common first: a trial cut short counts as undecided, and an open
// loop's GOMAXPROCS, set by rule rather than tried, is not counted.
func TestProcsKeptCountsTrialsOnly(t *testing.T) {
	tried := []result.ProcsTry{{Procs: 2}, {Procs: 1}}
	cells := []result.Cell{
		{Generator: &result.Generator{Procs: 1, ProcsWhy: "tried, kept 1", ProcsTrial: tried}},
		{Generator: &result.Generator{Procs: 2, ProcsWhy: "tried, kept 2", ProcsTrial: tried}},
		{Generator: &result.Generator{Procs: 2, ProcsWhy: "cut short", ProcsUndecided: true}},
		{Generator: &result.Generator{Procs: 4, ProcsWhy: "each open-loop cell runs under GOMAXPROCS 4"}},
		{Generator: &result.Generator{Procs: 2}},
		{},
	}
	want := []ProcsKept{{Procs: 2, Cells: 2, Undecided: 1}, {Procs: 1, Cells: 1}}
	if got := procsKept(cells); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
