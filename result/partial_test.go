package result

import (
	"slices"
	"testing"
)

// A run that failed after its closed-loop cells lacks its fault cell once,
// at the count the plan runs it at (the first, at least 2), not once per
// client count, cells the plan never had.
func TestPlanCellsListAFaultScenarioOnce(t *testing.T) {
	t.Parallel()
	m := Meta{Impls: []string{"redis", "zk-pred"}, Scenarios: []string{"hot", "pause"}, Clients: []int{1, 4, 16},
		ScenarioKinds: map[string]Kind{"hot": KindClosed, "pause": KindFault}}
	var got []string
	for _, c := range PlanCells(m) {
		got = append(got, c.Key())
	}
	var want []string
	for _, i := range m.Impls {
		for _, n := range []int{1, 4, 16} {
			want = append(want, Cell{Impl: i, Scenario: "hot", Clients: n}.Key())
		}
		want = append(want, Cell{Impl: i, Scenario: "pause", Clients: 2}.Key())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("PlanCells: %v, want %v", got, want)
	}
	sum := &Summary{Failure: "zk-pred pause: server gone"}
	for _, c := range PlanCells(m)[:7] {
		sum.Cells = append(sum.Cells, c)
	}
	p := MissingFromRun(t.TempDir(), m, sum)
	if p == nil || len(p.Missing) != 1 || p.Missing[0].Cell != want[7] {
		t.Errorf("missing %+v, want %s alone", p, want[7])
	}
}
