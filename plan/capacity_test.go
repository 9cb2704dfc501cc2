package plan_test

import (
	"context"
	"errors"
	"github.com/lockbench/lockbench/engine"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"

	_ "github.com/lockbench/lockbench/impl/inproc"
	"github.com/lockbench/lockbench/plan"
	"github.com/lockbench/lockbench/result"
)

// A program of its own runs a capacity search as the CLI does: the
// library validates it, runs its trials as plans, tells the observers
// each point and writes capacity.json; no flag or printer is involved.
func TestRunCapacityIsALibraryCall(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "cap")
	var heard []int
	c := plan.Capacity{Knee: true, MaxClients: 2, Trial: 150 * time.Millisecond,
		Base:        basePlan(t, "--impl", "inproc", "--slo", "p99<=1s", "--duration", "150ms", "--warmup", "0s", "--out", out),
		OnKneePoint: func(name string, p result.KneePoint) { heard = append(heard, p.Clients) }}
	rep, err := plan.RunCapacity(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := result.ReadCapacity(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Knees) != 1 || len(back.Knees) != 1 || len(back.Knees[0].Points) != len(heard) || len(heard) < 2 {
		t.Fatalf("knees %+v, read back %+v, heard %v: want one sweep, its every point heard and kept", rep.Knees, back.Knees, heard)
	}
	if rep.Searches != nil || rep.SLO != "p99<=1s" {
		t.Errorf("searches %+v, SLO %q: want none (knee only) under the plan's SLO", rep.Searches, rep.SLO)
	}
}

// basePlan is the plan the run flags args describe.
func basePlan(t *testing.T, args ...string) plan.Plan {
	t.Helper()
	var f plan.Flags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(fs)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Bounds that cannot run are usage errors, named by their flag.
func TestCapacityValidateRefusesWhatCannotRun(t *testing.T) {
	t.Parallel()
	base := basePlan(t, "--impl", "inproc", "--slo", "p99<=10ms")
	sharded := base
	sharded.Shard = &plan.Sharding{}
	for name, c := range map[string]plan.Capacity{
		"nothing to find":  {Base: base},
		"precision":        {Base: base, Rate: true, Precision: 0.6},
		"others":           {Base: base, Rate: true, OthersShare: 1.5},
		"rates":            {Base: base, Rate: true, StartRate: 10, MaxRate: 5},
		"arrivals of max":  {Base: basePlan(t, "--impl", "inproc", "--slo", "max<=10ms"), Rate: true, MaxArrivals: 500},
		"sharded":          {Base: sharded, Rate: true},
		"negative arrival": {Base: base, Rate: true, MaxArrivals: -1},
	} {
		if err := c.Validate(); !errors.Is(err, engine.ErrUsage) {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}
}
