package plan

import (
	"github.com/lockbench/lockbench/engine"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// A cell dropped because summary.json could not be written takes its
// share of the SLO's judgement with it: the summary then written with the
// failure holds no breach, and no capacity, of a cell it lacks.
func TestDroppedCellLeavesNoSLOFigures(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	m := &matrix{plan: Plan{SLO: "p99<=1ms", Out: out}, sum: &result.Summary{},
		logs: map[string]*hlog.Writer{}, logErr: map[string]error{}}
	fast := engine.Result{Cell: result.Cell{Impl: "inproc", Scenario: "hot", Kind: result.KindClosed, Clients: 1, Locks: 1,
		DurationS: 1, Acquires: 1000, AcquiresPerS: 1000, AcquireLatencyUs: result.Latency{P50: 10, P99: 100, Max: 200}}}
	if err := m.keep(fast, 0); err != nil {
		t.Fatal(err)
	}
	// summary.json becomes a directory: the next write fails.
	summary := filepath.Join(out, result.SummaryFile)
	if err := os.Remove(summary); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(summary, 0o755); err != nil {
		t.Fatal(err)
	}
	slow := fast
	slow.Clients, slow.AcquireLatencyUs = 4, result.Latency{P50: 4000, P99: 9000, Max: 12000}
	if err := m.keep(slow, 1); err == nil {
		t.Fatal("keep wrote summary.json over a directory")
	}
	if len(m.sum.Cells) != 1 || len(m.sum.SLOBreaches) != 0 || m.sum.SLOMet == nil || !*m.sum.SLOMet {
		t.Errorf("after the 4-client cell was dropped: %d cells, breaches %+v, met %v; want the 1-client cell, met, no breach",
			len(m.sum.Cells), m.sum.SLOBreaches, m.sum.SLOMet)
	}
	for _, c := range m.sum.Capacity {
		if c.FirstMissed == 4 || len(c.Tested) != 1 {
			t.Errorf("capacity %+v counts the dropped cell", c)
		}
	}
}
