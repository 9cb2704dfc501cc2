package plan

import (
	"context"
	"fmt"
	"github.com/lockbench/lockbench/engine"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/pflag"

	_ "github.com/lockbench/lockbench" // the scenarios
	_ "github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/impl"
	_ "github.com/lockbench/lockbench/impl/inproc"
	"github.com/lockbench/lockbench/result"
)

// inprocB is a second in-process lock, so that a plan sets two
// implementations side by side without a server.
const inprocB = "test-inproc-b"

var registerB sync.Once

// orderPlan is a validated plan of inproc and inprocB from run's flags.
func orderPlan(t *testing.T, args ...string) Plan {
	t.Helper()
	registerB.Do(func() {
		d, _ := impl.Lookup("inproc")
		d.Name = inprocB
		impl.Register(d)
	})
	var f Flags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse(append([]string{"--impl", "inproc," + inprocB, "--warmup", "0s"}, args...)); err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(fs)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

// plannedKeys are the cells' impl/scenario/clients in the order given.
func plannedKeys(cs []plannedCell) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("%s/%s/%d", c.spec.Impl, c.spec.Scenario.Name(), c.spec.Clients)
	}
	return out
}

func cellKeys(cs []result.Cell) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("%s/%s/%d", c.Impl, c.Scenario, c.Clients)
	}
	return out
}

// canonical is impls × scenarios × clients, implementation first: the
// order asked.
func canonical(impls, scenarios []string, clients []int) []string {
	var out []string
	for _, i := range impls {
		for _, s := range scenarios {
			for _, n := range clients {
				out = append(out, fmt.Sprintf("%s/%s/%d", i, s, n))
			}
		}
	}
	return out
}

// Side by side, the implementations run back to back for each scenario
// and client count, the first of one group last in the next, so that
// neither meets the colder servers every time; the canonical places
// still say where each cell belongs in the order asked.
func TestCellsRunInterleavedABBA(t *testing.T) {
	p := orderPlan(t, "--scenario", "hot,keys", "--clients", "1,2,3", "--acquires", "10")
	const a, b = "inproc", inprocB
	want := []string{
		a + "/hot/1", b + "/hot/1",
		b + "/hot/2", a + "/hot/2",
		a + "/hot/3", b + "/hot/3",
		b + "/keys/1", a + "/keys/1",
		a + "/keys/2", b + "/keys/2",
		b + "/keys/3", a + "/keys/3",
	}
	cells := p.cells()
	if got := plannedKeys(cells); !slices.Equal(got, want) {
		t.Errorf("run order\n got %v\nwant %v", got, want)
	}
	slices.SortFunc(cells, func(x, y plannedCell) int { return x.canon - y.canon })
	canon := canonical([]string{a, b}, []string{"hot", "keys"}, []int{1, 2, 3})
	if got := plannedKeys(cells); !slices.Equal(got, canon) {
		t.Errorf("by canonical place\n got %v\nwant %v", got, canon)
	}
	for i, c := range cells {
		if c.canon != i {
			t.Errorf("%s: canonical place %d, want %d", plannedKeys(cells[i : i+1])[0], c.canon, i)
		}
	}
}

// A fault script still runs once per implementation, with the first
// client count, and a ramp once per implementation and scenario, with the
// largest; they take their turns in the alternation like any group.
func TestFaultAndRampCellsOncePerImpl(t *testing.T) {
	const a, b = "inproc", inprocB
	fault := orderPlan(t, "--scenario", "hot,crash", "--clients", "4,8", "--acquires", "10")
	want := []string{a + "/hot/4", b + "/hot/4", b + "/hot/8", a + "/hot/8", a + "/crash/4", b + "/crash/4"}
	if got := plannedKeys(fault.cells()); !slices.Equal(got, want) {
		t.Errorf("with a fault script\n got %v\nwant %v", got, want)
	}
	ramp := orderPlan(t, "--scenario", "hot,keys", "--clients", "2,5", "--ramp", "1:1:1s")
	want = []string{a + "/hot/5", b + "/hot/5", b + "/keys/5", a + "/keys/5"}
	if got := plannedKeys(ramp.cells()); !slices.Equal(got, want) {
		t.Errorf("with a ramp\n got %v\nwant %v", got, want)
	}
}

// A run interleaves its cells, each with a namespace of its own on the
// servers, yet summary.json lists them in the order asked after every
// cell, not only at the end: a run cut short is ordered too. meta.json
// says how the cells ran.
func TestRunKeepsCanonicalOrder(t *testing.T) {
	dir := t.TempDir()
	p := orderPlan(t, "--scenario", "hot,keys", "--clients", "1,2,3", "--acquires", "20", "--out", dir)
	var ran, namespaces []string
	p.OnCell = func(_, _ int, spec engine.CellSpec) {
		ran = append(ran, fmt.Sprintf("%s/%s/%d", spec.Impl, spec.Scenario.Name(), spec.Clients))
		namespaces = append(namespaces, spec.Config.Namespace)
	}
	canon := canonical(p.Impls, p.Scenarios, p.Clients)
	p.OnResult = func(result.Cell) {
		s, err := result.ReadSummary(filepath.Join(dir, result.SummaryFile))
		if err != nil {
			t.Fatal(err)
		}
		got := cellKeys(s.Cells)
		if !slices.IsSortedFunc(got, func(x, y string) int { return slices.Index(canon, x) - slices.Index(canon, y) }) {
			t.Errorf("summary.json after %d cells: %v, not in the order asked", len(got), got)
		}
	}
	sum, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if want := plannedKeys(p.cells()); !slices.Equal(ran, want) {
		t.Errorf("ran\n %v\nwant %v", ran, want)
	}
	if slices.Equal(ran, canon) {
		t.Error("the cells ran in the order asked, one implementation after the other")
	}
	if len(slices.Compact(slices.Sorted(slices.Values(namespaces)))) != len(ran) {
		t.Errorf("namespaces %v: not one per cell", namespaces)
	}
	s, err := result.ReadSummary(filepath.Join(dir, result.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for name, cells := range map[string][]result.Cell{"returned": sum.Cells, "summary.json": s.Cells} {
		if got := cellKeys(cells); !slices.Equal(got, canon) {
			t.Errorf("%s cells\n %v\nwant %v", name, got, canon)
		}
		for _, c := range cells {
			if c.Acquires != 20 {
				t.Errorf("%s: %s acquired %d times, want 20", name, c.Key(), c.Acquires)
			}
		}
	}
	m, err := result.ReadMeta(filepath.Join(dir, result.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	if m.Order != RunOrder || !strings.Contains(RunOrder, "interleaved") {
		t.Errorf("meta.json order %q, want %q", m.Order, RunOrder)
	}
}

// A ramp's stairs, which come back together from one cell, enter the
// summary at their implementation's place, in the order they climbed,
// even where the second implementation's staircase ran first.
func TestRampStairsKeepCanonicalOrder(t *testing.T) {
	p := orderPlan(t, "--scenario", "hot,keys", "--clients", "2", "--ramp", "1:1:1s", "--hold", "1ms", "--out", t.TempDir())
	runs := 0
	p.OnCell = func(int, int, engine.CellSpec) { runs++ }
	sum, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if runs != 4 {
		t.Errorf("%d ramp cells ran, want one per implementation and scenario", runs)
	}
	want := []string{"inproc/hot/1", "inproc/hot/2", "inproc/keys/1", "inproc/keys/2",
		inprocB + "/hot/1", inprocB + "/hot/2", inprocB + "/keys/1", inprocB + "/keys/2"}
	if got := cellKeys(sum.Cells); !slices.Equal(got, want) {
		t.Errorf("cells %v, want %v", got, want)
	}
}
