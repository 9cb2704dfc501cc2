package linear

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/result"
)

// hist builds histories by hand: each call appends one operation of a
// client on lock 0, times in µs.
type hist struct{ ops []result.Op }

func (h *hist) add(client int32, k result.OpKind, o result.Outcome, call, ret int64, token uint64) *hist {
	h.ops = append(h.ops, result.Op{Call: call * 1000, Return: ret * 1000, Client: client, Kind: k, Outcome: o,
		Token: token, Fenced: token != 0})
	return h
}

func (h *hist) history(expiring bool) *result.History {
	return &result.History{Ops: h.ops, Names: []string{"lock-0"}, Expiring: expiring}
}

// cycles appends n correct acquire/release cycles of clients taking turns,
// with waiters whose acquires were called long before they returned.
func (h *hist) cycles(from int64, n int, clients int32, token uint64) (int64, uint64) {
	t := from
	for i := range n {
		c := int32(i) % clients
		h.add(c, result.OpAcquire, result.OutOK, t-5, t+1, token)
		h.add(c, result.OpRelease, result.OutOK, t+3, t+4, 0)
		t += 6
		token++
	}
	return t, token
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		build    func(h *hist)
		expiring bool
		want     result.Verdict
		expiries int64
	}{
		{"turns", func(h *hist) { h.cycles(10, 50, 4, 1) }, false, result.Linearizable, 0},
		{"release ok that did not release", func(h *hist) {
			h.add(0, result.OpAcquire, result.OutOK, 0, 1, 0)
			h.add(0, result.OpRelease, result.OutOK, 2, 3, 0)
			h.add(0, result.OpTry, result.OutHeld, 4, 5, 0)
		}, true, result.NotLinearizable, 0},
		{"token backwards", func(h *hist) {
			h.add(0, result.OpAcquire, result.OutOK, 0, 1, 7)
			h.add(0, result.OpRelease, result.OutOK, 2, 3, 0)
			h.add(1, result.OpAcquire, result.OutOK, 1, 5, 6)
			h.add(1, result.OpRelease, result.OutOK, 6, 7, 0)
		}, false, result.NotLinearizable, 0},
		{"two holders", func(h *hist) {
			h.add(0, result.OpAcquire, result.OutOK, 0, 1, 0)
			h.add(1, result.OpAcquire, result.OutOK, 0, 2, 0)
			h.add(0, result.OpRelease, result.OutOK, 3, 4, 0)
			h.add(1, result.OpRelease, result.OutOK, 5, 6, 0)
		}, true, result.NotLinearizable, 0},
		{"lease expired under its holder", func(h *hist) {
			h.add(0, result.OpAcquire, result.OutOK, 0, 1, 0)
			h.add(1, result.OpAcquire, result.OutOK, 0, 5, 0)
			h.add(1, result.OpRelease, result.OutOK, 6, 7, 0)
			h.add(0, result.OpRelease, result.OutLost, 8, 9, 0)
		}, true, result.Linearizable, 1},
		{"unknown acquire explains a held try", func(h *hist) {
			h.add(0, result.OpAcquire, result.OutUnknown, 0, 1, 0)
			h.add(1, result.OpTry, result.OutHeld, 4, 5, 0)
		}, true, result.Linearizable, 0},
		{"a try sharing its clock reading with the release before", func(h *hist) {
			h.add(0, result.OpTry, result.OutOK, 0, 1, 1)
			h.add(0, result.OpRelease, result.OutOK, 2, 3, 0)
			h.add(0, result.OpTry, result.OutHeld, 3, 5, 0)
			h.add(0, result.OpAcquire, result.OutOK, 5, 30, 2)
		}, true, result.NotLinearizable, 0},
		{"held try with nobody to hold it", func(h *hist) {
			h.add(0, result.OpAcquire, result.OutOK, 0, 1, 0)
			h.add(0, result.OpRelease, result.OutOK, 2, 3, 0)
			h.add(1, result.OpTry, result.OutHeld, 4, 5, 0)
		}, true, result.NotLinearizable, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var h hist
			tc.build(&h)
			rep := Check(h.history(tc.expiring), 10*time.Second)
			if rep.Linearizable != tc.want || rep.LeaseExpiries != tc.expiries {
				t.Fatalf("verdict %q, %d expiries; want %q, %d", rep.Linearizable, rep.LeaseExpiries, tc.want, tc.expiries)
			}
			if tc.want == result.NotLinearizable && (rep.Illegal == nil || rep.Illegal.Stuck == "") {
				t.Fatalf("no illegal window named: %+v", rep.Illegal)
			}
		})
	}
}

// TestWindowsNameTheShortest: a long history is cut into windows, and a
// violation deep inside it is named by a window of a few operations.
func TestWindowsNameTheShortest(t *testing.T) {
	t.Parallel()
	var h hist
	end, tok := h.cycles(10, 3000, 8, 1)
	end, tok = h.cycles(end, 10, 8, tok)
	h.add(3, result.OpAcquire, result.OutOK, end, end+1, tok)
	h.add(3, result.OpRelease, result.OutOK, end+2, end+3, 0)
	h.add(3, result.OpTry, result.OutHeld, end+4, end+5, 0) // nobody holds it
	h.cycles(end+20, 3000, 8, tok+1)
	rep := Check(h.history(true), 20*time.Second)
	if rep.Linearizable != result.NotLinearizable {
		t.Fatalf("verdict %q", rep.Linearizable)
	}
	if rep.Windows < 2 {
		t.Errorf("%d windows for %d operations", rep.Windows, rep.Ops)
	}
	if rep.Illegal.Ops > 12 || !strings.Contains(rep.Illegal.Stuck, "client 3 try → held") {
		t.Errorf("illegal window %+v: want a few operations around client 3's try", rep.Illegal)
	}
	path := filepath.Join(t.TempDir(), "v"+VisualizationExt)
	if err := rep.Visualize(path); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), "<html") {
		t.Fatalf("visualization: %v, %d bytes", err, len(b))
	}

	var ok hist
	ok.cycles(10, 6000, 8, 1)
	if rep := Check(ok.history(false), 20*time.Second); rep.Linearizable != result.Linearizable || rep.Windows < 2 {
		t.Fatalf("a correct history: %q in %d windows", rep.Linearizable, rep.Windows)
	}
}

// TestBudgetSpentIsUnknown: a check with no time left says so.
func TestBudgetSpentIsUnknown(t *testing.T) {
	t.Parallel()
	var h hist
	h.cycles(10, 10, 2, 1)
	if rep := Check(h.history(false), 0); rep.Linearizable != result.VerdictUnknown {
		t.Fatalf("verdict %q, want unknown", rep.Linearizable)
	}
}

// TestManyUnknownAcquires: a cell's end leaves one acquire of unknown
// outcome per waiter; without a try that found the lock held they can
// explain nothing, and the check decides at once (every one of them left
// in would double the states its search carries).
func TestManyUnknownAcquires(t *testing.T) {
	t.Parallel()
	var h hist
	end, _ := h.cycles(10, 200, 4, 1)
	for c := range int32(500) {
		h.add(c+4, result.OpAcquire, result.OutUnknown, 20+int64(c), end+100, 0)
	}
	rep := Check(h.history(true), 10*time.Second)
	if rep.Linearizable != result.Linearizable || rep.Unknown != 500 || rep.Ops != 900 {
		t.Fatalf("verdict %q, %d of %d operations unknown", rep.Linearizable, rep.Unknown, rep.Ops)
	}
}
