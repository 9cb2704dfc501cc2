package linear

import (
	"flag"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/result"
)

var (
	historyFile = flag.String("history", "", "a cell's .history file to check and time (go test ./linear -run TestCheckFile -history F)")
	historyWant = flag.String("want", "", "with -history: the verdict the file must get: linearizable, not or unknown")
)

// TestCheckFile checks a history a run spilled, and says what the check
// cost: the measurement behind the docs' checking times. Without
// -history it checks two files it spills itself, of known verdicts by
// construction: two clients taking turns, and a grant while another
// client holds the lock.
func TestCheckFile(t *testing.T) {
	if *historyFile != "" {
		rep := checkFile(t, *historyFile)
		if *historyWant != "" && string(rep.Linearizable) != *historyWant {
			t.Errorf("%s: %q, want %q", *historyFile, rep.Linearizable, *historyWant)
		}
		return
	}
	dir := t.TempDir()
	ms := int64(time.Millisecond)
	op := func(client int32, kind result.OpKind, call, ret int64) result.Op {
		return result.Op{Client: client, Kind: kind, Outcome: result.OutOK, Call: call * ms, Return: ret * ms}
	}
	turns := []result.Op{op(0, result.OpAcquire, 0, 1), op(1, result.OpAcquire, 0, 4), op(0, result.OpRelease, 2, 3), op(1, result.OpRelease, 5, 6)}
	both := []result.Op{op(0, result.OpAcquire, 0, 1), op(1, result.OpAcquire, 2, 3), op(0, result.OpRelease, 4, 5), op(1, result.OpRelease, 6, 7)}
	for _, c := range []struct {
		cell result.Cell
		ops  []result.Op
		want result.Verdict
	}{
		{result.Cell{Impl: "turns", Scenario: "hot", Clients: 2}, turns, result.Linearizable},
		{result.Cell{Impl: "both", Scenario: "hot", Clients: 2}, both, result.NotLinearizable},
	} {
		if err := result.WriteHistory(dir, c.cell, &result.History{Ops: c.ops, Names: []string{"l"}}); err != nil {
			t.Fatal(err)
		}
		rep := checkFile(t, result.CellPath(dir, c.cell, result.HistoryExt))
		if rep.Linearizable != c.want || rep.Ops != int64(len(c.ops)) {
			t.Errorf("%s: %q over %d operations, want %q over %d", c.cell.Impl, rep.Linearizable, rep.Ops, c.want, len(c.ops))
		}
	}
}

// checkFile reads a spilled history back by its file name, checks it and
// logs what that cost.
func checkFile(t *testing.T, file string) Report {
	t.Helper()
	dir, c := cellOfPath(file)
	ops, err := result.ReadHistory(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	h := &result.History{Ops: ops, Expiring: true}
	if len(ops) > 0 {
		h.Start = ops[0].Call
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rep := Check(h, 10*time.Minute)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	t.Logf("%d operations (%d unknown) in %d windows: %s in %.2f s, %.0f MB allocated, heap in use after %.0f MB",
		rep.Ops, rep.Unknown, rep.Windows, rep.Linearizable, rep.CheckMs/1e3, rep.CheckAllocMB, float64(after.HeapInuse)/(1<<20))
	if rep.Ops != int64(len(ops)) {
		t.Errorf("%s: the check read %d operations of %d", file, rep.Ops, len(ops))
	}
	return rep
}

// cellOfPath is the results directory and the cell a history file
// belongs to: RESULTS/cells/IMPL/SCENARIO_cN.history, or, as results
// before the cells' folders kept it, RESULTS/IMPL_SCENARIO_cN.history.
func cellOfPath(file string) (string, result.Cell) {
	dir, base := filepath.Split(file)
	base = strings.TrimSuffix(base, result.HistoryExt)
	impl := filepath.Base(filepath.Clean(dir))
	if up := filepath.Dir(filepath.Clean(dir)); filepath.Base(up) == result.CellsDir {
		c := cellOf("x_" + base)
		c.Impl = impl
		return filepath.Dir(up), c
	}
	return dir, cellOf(base)
}

// cellOf is the cell a flat file's base name (impl_scenario_cN) belongs to.
func cellOf(base string) result.Cell {
	i := strings.LastIndex(base, "_c")
	j := strings.LastIndex(base[:max(i, 0)], "_")
	if i < 0 || j < 0 {
		return result.Cell{}
	}
	var n int
	for _, r := range base[i+2:] {
		n = n*10 + int(r-'0')
	}
	return result.Cell{Impl: base[:j], Scenario: base[j+1 : i], Clients: n}
}
