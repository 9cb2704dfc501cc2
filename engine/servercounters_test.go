package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/inproc"
	"github.com/lockbench/lockbench/result"
)

// countingKinds is a server kind whose counter goes up by 7 per read, so
// that a cell that read it before and after reports 7.
type countingKinds struct{ reads atomic.Int64 }

func (k *countingKinds) Counters(kind string) func(context.Context, []string) (map[string]int64, error) {
	if kind != "test-kind" {
		return nil
	}
	return func(context.Context, []string) (map[string]int64, error) {
		return map[string]int64{"grants": 7 * k.reads.Add(1)}, nil
	}
}

// Counts: the kind's grants are its messages.
func (*countingKinds) Counts(kind string) func(map[string]int64) result.ServerCounts {
	if kind != "test-kind" {
		return nil
	}
	return func(d map[string]int64) result.ServerCounts {
		return result.ServerCounts{Messages: d["grants"], Unit: "grants"}
	}
}

func (*countingKinds) CPUTime(string) (time.Duration, bool) { return 0, false }

func init() {
	impl.Register(impl.Driver{Name: "test-counted", Needs: []impl.Need{{Role: "test-counted", Kind: "test-kind", Count: 1}},
		New: func(ctx context.Context, cfg impl.Config) (impl.Locker, error) { return inproc.New(ctx, cfg) }})
}

// The servers' counters come from the kinds the spec is given, and from
// nowhere else: a library user who passes none gets the clients' figures
// alone, one who passes the sandbox's (or its own) gets the servers'.
func TestServerCountersComeFromTheSpecsKinds(t *testing.T) {
	t.Parallel()
	spec := CellSpec{Impl: "test-counted", Clients: 2, Acquires: 50,
		Config: impl.Config{Servers: impl.Servers{"test-counted": {"127.0.0.1:1"}}, Namespace: t.Name()}}
	c, err := RunCell(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if c.Server != nil || c.ServerCounts != nil || c.ServerNote != "" {
		t.Errorf("no kinds given, yet server figures %v (%q)", c.Server, c.ServerNote)
	}
	k := &countingKinds{}
	spec.ServerKinds = k
	if c, err = RunCell(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if k.reads.Load() != 2 || c.Server["grants"] != 7 {
		t.Errorf("%d reads, server figures %v: want two reads 7 apart", k.reads.Load(), c.Server)
	}
	// What the kind says its counters mean comes with them, and the
	// clients' count over the same span beside them.
	if n, unit, ok := c.ServerCounts.Handled(); !ok || n != 7 || unit != "grants" || c.ServerCounts.Received() != c.Notifications {
		t.Errorf("typed server figures %+v: want 7 grants, and the clients' %d notifications", c.ServerCounts, c.Notifications)
	}
}
