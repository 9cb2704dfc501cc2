package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
)

// Off a terminal (a CI log) every cell shows progress — its first line as
// it starts and its last as it ends — not only the first cell of a run.
func TestProgressInALogShowsEveryCell(t *testing.T) {
	var log bytes.Buffer
	p := newProgressLine(&log, false)
	hot, _ := engine.LookupScenario("hot")
	spec := engine.CellSpec{Impl: "inproc", Scenario: hot, Clients: 4}
	for i := range 3 {
		for s := 1; s <= 3; s++ {
			p.update(i, 3, spec, engine.Progress{Elapsed: time.Duration(s) * time.Second, Total: 3 * time.Second, Acquires: int64(100 * s)})
		}
		p.clear()
	}
	out := log.String()
	for i := 1; i <= 3; i++ {
		for _, want := range []string{"1s/3s", "3s/3s"} {
			line := "[" + string(rune('0'+i)) + "/3] inproc hot clients=4  " + want
			if !strings.Contains(out, line) {
				t.Errorf("the log lacks %q:\n%s", line, out)
			}
		}
	}
	if strings.Contains(out, "2s/3s") || strings.Contains(out, "\r") {
		t.Errorf("the log shows more than a line a cell start, end and 10 s, or a terminal's redraw:\n%s", out)
	}
}
