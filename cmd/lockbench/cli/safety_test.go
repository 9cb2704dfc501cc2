package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

// A history found not linearizable makes the run unsafe (exit 3) as an
// overlap does; one whose check ran out of time does not.
func TestNotLinearizableIsUnsafe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v      result.Verdict
		unsafe bool
	}{{result.NotLinearizable, true}, {result.VerdictUnknown, false}, {result.Linearizable, false}} {
		sum := &result.Summary{Cells: []result.Cell{{Impl: "x", Scenario: "hot", Clients: 2, Safety: &result.Safety{Linearizable: tc.v}}}}
		err := unsafeCells(sum)
		if errors.Is(err, errUnsafe) != tc.unsafe || tc.unsafe && exitCode(err, t.Context(), io.Discard) != ExitUnsafe {
			t.Errorf("verdict %q: %v", tc.v, err)
		}
	}
}

// --history=false records no history: the cell's verdict is "not
// checked", never linearizable, no history file is written, the run is not
// called unsafe, and the report says so; by default the same cell is
// checked.
func TestHistoryOffIsNotChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flag string
		want result.Verdict
	}{{"--history=false", result.NotChecked}, {"--history=true", result.Linearizable}} {
		out := filepath.Join(t.TempDir(), "r")
		code, _, errOut := run("run", "--impl", "inproc", "--clients", "2", "--duration", "200ms", "--warmup", "0s", "--out", out, tc.flag)
		if code != ExitOK {
			t.Fatalf("%s: exit %d\n%s", tc.flag, code, errOut)
		}
		sum, err := result.ReadSummary(filepath.Join(out, result.SummaryFile))
		if err != nil || len(sum.Cells) != 1 || sum.Cells[0].Safety == nil {
			t.Fatalf("%s: summary %v, %v", tc.flag, sum, err)
		}
		c := sum.Cells[0]
		_, herr := os.Stat(result.CellPath(out, c, result.HistoryExt))
		if c.Safety.Linearizable != tc.want || (herr == nil) != (tc.want == result.Linearizable) {
			t.Errorf("%s: verdict %q, history file %v; want %q", tc.flag, c.Safety.Linearizable, herr, tc.want)
		}
		md, _ := os.ReadFile(filepath.Join(out, "safety.md"))
		if got := strings.Contains(string(md), "not checked (no history recorded"); got != (tc.want == result.NotChecked) {
			t.Errorf("%s: report says not checked: %v", tc.flag, got)
		}
	}
}
