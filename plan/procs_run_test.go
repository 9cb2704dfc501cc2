package plan_test

import (
	"context"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/plan"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/sandboxtest"
	"github.com/spf13/pflag"
)

// A run over a sandbox on this machine has each closed-loop cell with a
// warm-up try Go's GOMAXPROCS and one that leaves its servers a core, and
// says so in meta.json and in each cell; a cell without the warm-up for
// a trial keeps Go's, and Go's is back after the run. A user's GOMAXPROCS
// wins, and then nothing is tried or said.
func TestSandboxedRunTriesItsProcs(t *testing.T) {
	sandboxtest.Require(t, "redis")
	if runtime.NumCPU() < 2 {
		t.Skip("one core: nothing to leave the servers")
	}
	run := func(t *testing.T, warmup string, more ...string) (result.Meta, result.Cell) {
		var f plan.Flags
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		f.Register(fs)
		if err := fs.Parse(append([]string{"--impl", "redis", "--clients", "2", "--locks", "2", "--warmup", warmup, "--redis", "", "--out", t.TempDir()}, more...)); err != nil {
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
	goes := runtime.GOMAXPROCS(0)
	t.Run("tried", func(t *testing.T) {
		t.Setenv("GOMAXPROCS", "")
		m, c := run(t, "800ms", "--duration", "200ms")
		if why := m.Host["gomaxprocs_why"]; !strings.Contains(why, "of its servers: each closed-loop cell") || !strings.Contains(why, "tries GOMAXPROCS") {
			t.Errorf("meta: gomaxprocs %q, why %q", m.Host["gomaxprocs"], why)
		}
		g := c.Generator
		if g == nil || len(g.ProcsTrial) != 2 || g.ProcsTrial[0].Procs != goes || g.ProcsTrial[1].Procs >= goes {
			t.Fatalf("the cell tried %+v; Go's is %d", g, goes)
		}
		if g.Procs != g.ProcsTrial[0].Procs && g.Procs != g.ProcsTrial[1].Procs || !strings.Contains(g.ProcsWhy, "kept "+strconv.Itoa(g.Procs)) {
			t.Errorf("measured on %d after trying %+v: %q", g.Procs, g.ProcsTrial, g.ProcsWhy)
		}
	})
	t.Run("no warm-up", func(t *testing.T) {
		t.Setenv("GOMAXPROCS", "")
		m, c := run(t, "0s", "--duration", "200ms")
		if m.Host["gomaxprocs_why"] == "" || c.Generator.ProcsTrial != nil || c.Generator.ProcsWhy != "" || c.Generator.Procs != goes {
			t.Errorf("a cell with no warm-up: %+v (meta %q)", c.Generator, m.Host["gomaxprocs_why"])
		}
	})
	t.Run("open loop", func(t *testing.T) {
		// An open loop's clients wait on timers: it runs with Ps to
		// spare for their wakes, and says so in meta.json and the cell.
		t.Setenv("GOMAXPROCS", "")
		m, c := run(t, "0s", "--scenario", "rate", "--rate", "200", "--duration", "300ms")
		why := m.Host["gomaxprocs_why"]
		if !strings.Contains(why, "each closed-loop cell") || !strings.Contains(why, "; each open-loop cell runs under GOMAXPROCS "+strconv.Itoa(2*goes)) {
			t.Errorf("meta: why %q", why)
		}
		g := c.Generator
		if g == nil || g.Procs != 2*goes || g.ProcsTrial != nil || !strings.Contains(g.ProcsWhy, "a P is free to take its clients' timers") {
			t.Fatalf("an open-loop cell ran under %+v; Go's is %d", g, goes)
		}
		if c.Open == nil || c.Open.Offered == 0 || c.Acquires == 0 {
			t.Errorf("an open-loop cell that served nothing: %+v, %d acquires", c.Open, c.Acquires)
		}
	})
	t.Run("ramp", func(t *testing.T) {
		// A ramp's stairs are one curve: none of them chooses apart.
		t.Setenv("GOMAXPROCS", "")
		m, c := run(t, "500ms", "--ramp", "1:1:300ms")
		if m.Host["gomaxprocs_why"] != "" || c.Generator.ProcsTrial != nil || c.Generator.ProcsWhy != "" || c.Generator.Procs != goes {
			t.Errorf("a ramp's stair: %+v (meta %q)", c.Generator, m.Host["gomaxprocs_why"])
		}
	})
	t.Run("user's", func(t *testing.T) {
		t.Setenv("GOMAXPROCS", "2")
		for _, more := range [][]string{{"--warmup", "800ms"}, {"--scenario", "rate", "--rate", "200"}} {
			m, c := run(t, "0s", append([]string{"--duration", "200ms"}, more...)...)
			if m.Host["gomaxprocs_why"] != "" || c.Generator.ProcsWhy != "" || c.Generator.ProcsTrial != nil || c.Generator.Procs != goes {
				t.Errorf("%v: a user's GOMAXPROCS overridden: %q, %+v", more, m.Host["gomaxprocs_why"], c.Generator)
			}
		}
	})
}
