package plan_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/linear"
	"github.com/lockbench/lockbench/plan"
	"github.com/lockbench/lockbench/result"
)

// keeper is a test lock whose release answers ok and keeps the lock until
// its 10ms lease ends.
type keeper struct {
	id       int
	counters impl.Counters
}

var keeperState struct {
	mu     sync.Mutex
	holder map[string]int
	until  map[string]time.Time
}

func (k *keeper) Try(_ context.Context, name string) (impl.Lease, error) {
	s := &keeperState
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Now().Before(s.until[name]) {
		return nil, fmt.Errorf("keeper: %w", impl.ErrHeld)
	}
	s.holder[name], s.until[name] = k.id, time.Now().Add(10*time.Millisecond)
	return keeperLease{}, nil
}

func (k *keeper) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	for {
		if l, err := k.Try(ctx, name); err == nil {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

func (k *keeper) Counters() *impl.Counters { return &k.counters }
func (k *keeper) Close() error             { return nil }

type keeperLease struct{}

func (keeperLease) Fence() (uint64, bool)         { return 0, false }
func (keeperLease) Release(context.Context) error { return nil }

func init() {
	keeperState.holder, keeperState.until = map[string]int{}, map[string]time.Time{}
	impl.Register(impl.Driver{Name: "test-plan-keeper", Caps: impl.LeaseTTL,
		New: func(_ context.Context, cfg impl.Config) (impl.Locker, error) { return &keeper{id: cfg.Client}, nil }})
}

// A run spills every cell's history beside its interval log, complete and
// readable, and beside the report a picture of the illegal window of a
// history that is not linearizable; summary.json carries the verdicts.
func TestHistoryFilesAndVisualization(t *testing.T) {
	dir := t.TempDir()
	hot, _ := lockbench.LookupScenario("hot")
	sum, err := plan.Run(context.Background(), plan.Plan{
		Impls: []string{"inproc", "test-plan-keeper"}, Scenarios: []string{"hot"}, Clients: []int{2}, Out: dir,
		Cell: lockbench.CellSpec{Scenario: hot, Locks: 1, Duration: 300 * time.Millisecond, Think: time.Millisecond,
			MaxTime: time.Minute, ConnectParallel: 2, Repeat: 1,
			Config: impl.Config{Namespace: t.Name(), TTL: 10 * time.Second, Retry: 2 * time.Millisecond, SessionTimeout: 10 * time.Second,
				DialTimeout: 5 * time.Second, Jitter: 0.5, Seed: 1, Options: map[string]string{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	back, err := result.ReadSummary(filepath.Join(dir, result.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]result.Verdict{"inproc": result.Linearizable, "test-plan-keeper": result.NotLinearizable}
	if len(back.Cells) != len(want) || len(sum.Cells) != len(want) || back.Cells[0].Impl == back.Cells[1].Impl {
		t.Fatalf("%d cells read back, %d run, want one each of %v", len(back.Cells), len(sum.Cells), want)
	}
	for i, c := range back.Cells {
		s := c.Safety
		if s == nil || s.Linearizable != want[c.Impl] {
			t.Fatalf("%s: safety %+v read back, want %q", c.Impl, s, want[c.Impl])
		}
		ops, err := result.ReadHistory(dir, c)
		if err != nil || int64(len(ops)) != s.Ops || len(ops) == 0 {
			t.Fatalf("%s: %d operations read back (%v), the check read %d", c.Impl, len(ops), err, s.Ops)
		}
		vis := result.CellPath(dir, c, linear.VisualizationExt)
		_, statErr := os.Stat(vis)
		if bad := c.Impl == "test-plan-keeper"; bad != (statErr == nil) || bad && s.Illegal.File != filepath.ToSlash(result.CellRel(dir, c, linear.VisualizationExt)) {
			t.Errorf("%s: visualization %s: %v, named in %+v", c.Impl, vis, statErr, s.Illegal)
		}
		if sum.Cells[i].History == nil {
			t.Errorf("%s: the run's cell lost its history", c.Impl)
		}
	}
}
