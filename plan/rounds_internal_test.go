package plan

import (
	"context"
	"errors"
	"github.com/lockbench/lockbench/engine"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lockbench/lockbench/result"
)

// --repeat on a loop scenario runs each cell in rounds, each round of one
// implementation beside a round of the other, the order turned from one
// round to the next; the summary holds one cell per cell, its counts
// the rounds' sums and each timed figure with every round's value.
func TestRoundsInterleaveAndJoin(t *testing.T) {
	dir := t.TempDir()
	p := orderPlan(t, "--scenario", "hot", "--clients", "2", "--acquires", "30", "--repeat", "3", "--out", dir)
	var ran []string
	p.OnCell = func(_, _ int, spec engine.CellSpec) { ran = append(ran, spec.Impl) }
	sum, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	a, b := "inproc", inprocB
	if want := []string{a, b, b, a, a, b}; !slices.Equal(ran, want) {
		t.Fatalf("rounds ran %v, want %v", ran, want)
	}
	s, err := result.ReadSummary(filepath.Join(dir, result.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for name, cells := range map[string][]result.Cell{"returned": sum.Cells, "summary.json": s.Cells} {
		if got := cellKeys(cells); !slices.Equal(got, []string{a + "/hot/2", b + "/hot/2"}) {
			t.Fatalf("%s cells %v, want one per implementation", name, got)
		}
		for _, c := range cells {
			r := c.Rounds
			if c.Acquires != 90 || r == nil || r.N != 3 || len(r.AcquiresPerS.Rounds) != 3 || len(r.P99.Rounds) != 3 {
				t.Fatalf("%s: %s: %d acquisitions, rounds %+v; want 3 rounds of 30", name, c.Key(), c.Acquires, r)
			}
			if r.AcquiresPerS.Method != result.MethodTLog || !(r.AcquiresPerS.Low <= r.AcquiresPerS.Point && r.AcquiresPerS.Point <= r.AcquiresPerS.High) {
				t.Fatalf("%s: %s: acq/s %+v", name, c.Key(), r.AcquiresPerS)
			}
		}
	}
}

// A ramp in rounds climbs its staircase once a round, the implementations
// interleaved, and keeps each stair joined over the rounds.
func TestRampStairsRunInRounds(t *testing.T) {
	p := orderPlan(t, "--scenario", "hot", "--clients", "2", "--ramp", "1:1:300ms", "--hold", "1ms", "--repeat", "2", "--out", t.TempDir())
	runs := 0
	p.OnCell = func(int, int, engine.CellSpec) { runs++ }
	sum, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if runs != 4 {
		t.Fatalf("%d staircases ran, want 2 rounds × 2 implementations", runs)
	}
	want := []string{"inproc/hot/1", "inproc/hot/2", inprocB + "/hot/1", inprocB + "/hot/2"}
	if got := cellKeys(sum.Cells); !slices.Equal(got, want) {
		t.Fatalf("cells %v, want %v", got, want)
	}
	for _, c := range sum.Cells {
		if c.Rounds == nil || c.Rounds.N != 2 || c.Acquires == 0 {
			t.Fatalf("%s: rounds %+v, %d acquisitions; want 2 rounds", c.Key(), c.Rounds, c.Acquires)
		}
	}
}

func TestRoundsRefusedWhereTheyCannotRun(t *testing.T) {
	p := orderPlan(t, "--scenario", "hot", "--clients", "2")
	p.Cell.Repeat = 2
	p.Shard = &Sharding{Index: 0, Count: 2}
	if err := p.checkRounds(); !errors.Is(err, engine.ErrUsage) {
		t.Fatalf("--repeat with --shard: %v, want a usage error", err)
	}
}
