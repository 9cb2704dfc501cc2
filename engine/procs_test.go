package engine_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
)

// A cell given GOMAXPROCS to try takes turns with them while it warms up,
// counts every turn's grants, measures under the one that cycled fastest
// (the first on a near tie) and says so; a warm-up too short for a trial
// leaves GOMAXPROCS alone. Not parallel: GOMAXPROCS is the process's.
func TestProcsTrialKeepsTheFasterAndSaysSo(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	run := func(warmup time.Duration) *engine.Result {
		t.Helper()
		res, err := engine.RunCellDetail(context.Background(), engine.CellSpec{
			Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 4, Locks: 4,
			Warmup: warmup, Duration: 100 * time.Millisecond, ProcsTrial: []int{3, 1},
			Config: impl.Config{Namespace: t.Name()},
		})
		if err != nil {
			t.Fatal(err)
		}
		return &res
	}

	g := run(engine.MinTrialWarmup).Cell.Generator
	if len(g.ProcsTrial) != 2 || g.ProcsTrial[0].Procs != 3 || g.ProcsTrial[1].Procs != 1 {
		t.Fatalf("tried %+v, want 3 then 1", g.ProcsTrial)
	}
	for _, try := range g.ProcsTrial {
		// Uncontended in-process locks cycle in microseconds: each turn of
		// 72 ms sees thousands of grants.
		if try.Grants < 200 || try.GrantsPerS <= 0 {
			t.Errorf("GOMAXPROCS %d: %d grants, %.0f/s", try.Procs, try.Grants, try.GrantsPerS)
		}
	}
	want := 3
	if a, b := g.ProcsTrial[0].GrantsPerS, g.ProcsTrial[1].GrantsPerS; b >= a*1.03 {
		want = 1
	}
	if g.Procs != want || runtime.GOMAXPROCS(0) != want {
		t.Errorf("measured on GOMAXPROCS %d (now %d) after %+v, want %d", g.Procs, runtime.GOMAXPROCS(0), g.ProcsTrial, want)
	}
	if !strings.Contains(g.ProcsWhy, "GOMAXPROCS 3 vs 1 tried in the warm-up") || !strings.Contains(g.ProcsWhy, fmt.Sprintf("kept %d", want)) {
		t.Errorf("procs_why %q", g.ProcsWhy)
	}

	runtime.GOMAXPROCS(2)
	g = run(engine.MinTrialWarmup - time.Millisecond).Cell.Generator
	if g.ProcsTrial != nil || g.ProcsWhy != "" || g.Procs != 2 {
		t.Errorf("a warm-up too short for a trial: procs %d, tried %+v, why %q", g.Procs, g.ProcsTrial, g.ProcsWhy)
	}
}
