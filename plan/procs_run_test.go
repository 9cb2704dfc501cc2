package plan_test

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/sandboxtest"
	"github.com/lockbench/lockbench/plan"
	"github.com/lockbench/lockbench/result"
	"github.com/spf13/pflag"
)

// A run over a sandbox on this machine chooses lockbench's own
// parallelism, says so in meta.json and in each cell, and gives Go's back
// afterwards; a user's GOMAXPROCS wins, and then nothing is said.
func TestSandboxedRunChoosesItsProcs(t *testing.T) {
	sandboxtest.Require(t, "redis")
	if runtime.NumCPU() < 2 {
		t.Skip("one core: nothing to leave the servers")
	}
	run := func(t *testing.T) (result.Meta, result.Cell) {
		var f plan.Flags
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		f.Register(fs)
		if err := fs.Parse([]string{"--impl", "redis", "--clients", "1", "--acquires", "20", "--warmup", "0s", "--redis", "", "--out", t.TempDir()}); err != nil {
			t.Fatal(err)
		}
		p, err := f.Plan(fs)
		if err != nil {
			t.Fatal(err)
		}
		before := runtime.GOMAXPROCS(0)
		sum, err := plan.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if after := runtime.GOMAXPROCS(0); after != before {
			t.Errorf("GOMAXPROCS %d after the run, %d before", after, before)
		}
		m, err := result.ReadMeta(filepath.Join(p.Out, result.MetaFile))
		if err != nil {
			t.Fatal(err)
		}
		return m, sum.Cells[0]
	}
	t.Run("chosen", func(t *testing.T) {
		t.Setenv("GOMAXPROCS", "")
		m, c := run(t)
		if why := m.Host["gomaxprocs_why"]; !strings.Contains(why, "GOMAXPROCS="+m.Host["gomaxprocs"]) || !strings.Contains(why, "servers share this machine") {
			t.Errorf("meta: gomaxprocs %q, why %q", m.Host["gomaxprocs"], m.Host["gomaxprocs_why"])
		}
		if c.Generator == nil || c.Generator.Procs >= runtime.NumCPU() || c.Generator.ProcsWhy == "" {
			t.Errorf("the cell ran on %+v of %d cores", c.Generator, runtime.NumCPU())
		}
	})
	t.Run("user's", func(t *testing.T) {
		t.Setenv("GOMAXPROCS", "2")
		m, c := run(t)
		if m.Host["gomaxprocs_why"] != "" || c.Generator.ProcsWhy != "" {
			t.Errorf("a user's GOMAXPROCS overridden: %q, %q", m.Host["gomaxprocs_why"], c.Generator.ProcsWhy)
		}
	})
}
