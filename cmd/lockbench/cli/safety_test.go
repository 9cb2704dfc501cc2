package cli

import (
	"errors"
	"io"
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
