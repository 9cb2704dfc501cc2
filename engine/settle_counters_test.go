package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// lateKinds counts watches as etcd does, a moment after its waiter acted:
// its count reads 62 on the first reading after the cell and 63 from the
// second on.
type lateKinds struct{ reads atomic.Int64 }

func (k *lateKinds) Counters(kind string) func(context.Context, []string) (map[string]int64, error) {
	return func(context.Context, []string) (map[string]int64, error) {
		switch k.reads.Add(1) {
		case 1:
			return map[string]int64{"watches": 100}, nil // before the cell
		case 2:
			return map[string]int64{"watches": 162}, nil // the last one not yet counted
		default:
			return map[string]int64{"watches": 163}, nil
		}
	}
}

func (*lateKinds) Counts(string) func(map[string]int64) result.ServerCounts {
	return func(d map[string]int64) result.ServerCounts {
		w := d["watches"]
		return result.ServerCounts{Watches: &w}
	}
}

func (*lateKinds) CPUTime(string) (time.Duration, bool) { return 0, false }

// The end reading is taken again until the watches it counts stop
// changing: a count that lands a moment late is in the cell's, and a
// steady one is read twice and no more.
func TestServerCountersSettleLateWatches(t *testing.T) {
	d := impl.Driver{Name: "late", Needs: []impl.Need{{Role: "late", Kind: "late-kind", Count: 1}}}
	k := &lateKinds{}
	s := startServerCounters(context.Background(), k, d, impl.Servers{"late": {"127.0.0.1:1"}}, false)
	s.stop(context.Background())
	_, counts, note := s.deltas(0)
	if note != "" || counts == nil {
		t.Fatalf("no counts: %q", note)
	}
	if got, ok := counts.Fired(); !ok || got != 63 {
		t.Errorf("watches fired %d (%v), want 63: the late one counted", got, ok)
	}
	// Readings: before, 162, 163, 163 — steady on the fourth.
	if n := k.reads.Load(); n != 4 {
		t.Errorf("%d readings, want 4", n)
	}
}
