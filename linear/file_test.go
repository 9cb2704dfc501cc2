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

var historyFile = flag.String("history", "", "a cell's .history file to check and time (go test ./linear -run TestCheckFile -history F)")

// TestCheckFile checks a history a run spilled, and says what the check
// cost: the measurement behind the docs' checking times. Skipped unless
// -history names a file.
func TestCheckFile(t *testing.T) {
	if *historyFile == "" {
		t.Skip("no -history file given")
	}
	dir, base := filepath.Split(*historyFile)
	c := cellOf(strings.TrimSuffix(base, result.HistoryExt))
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
}

// cellOf is the cell a file's base name (impl_scenario_cN) belongs to.
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
