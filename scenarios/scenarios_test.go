package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	_ "github.com/lockbench/lockbench/impl/inproc"

	"github.com/lockbench/lockbench/dist"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

func TestKeysScenarioSpreadsOverNames(t *testing.T) {
	t.Parallel()
	keys, err := dist.ParseKeys("hot:0.25/0.9")
	if err != nil {
		t.Fatal(err)
	}
	cell, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "keys"), Clients: 4, Locks: 8, Keys: keys,
		Acquires: 2000, Config: impl.Config{Namespace: t.Name(), Seed: 7},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cell.Acquires != 2000 || cell.SafetyViolations != 0 {
		t.Fatalf("acquires %d, violations %d", cell.Acquires, cell.SafetyViolations)
	}
}

func TestFairnessAndHandoff(t *testing.T) {
	t.Parallel()
	hold, _ := dist.ParseDist("uniform:100us-300us")
	cell, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 4, Acquires: 400, HoldDist: hold,
		Config: impl.Config{Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	f := cell.Fairness
	var sum int64
	for _, n := range f.PerClient {
		sum += n
	}
	if len(f.PerClient) != 4 || sum != cell.Acquires {
		t.Errorf("per-client %v does not add up to %d", f.PerClient, cell.Acquires)
	}
	if f.Jain <= 0.25 || f.Jain > 1 || f.MaxShare < f.MinShare || f.MaxShare > 1 {
		t.Errorf("implausible fairness %+v", f)
	}
	// Four clients on one lock: most grants go to a waiting client.
	if cell.HandoffGapUs == nil || cell.HandoffGapUs.P50 <= 0 {
		t.Fatalf("no hand-off gaps on a contended lock: %+v", cell.HandoffGapUs)
	}

	// A duration, not a shared budget of acquisitions: on an in-process
	// lock one client could spend a budget before the others start.
	own, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 4, Locks: 4, Duration: 300 * time.Millisecond,
		Hold: 100 * time.Microsecond, Config: impl.Config{Namespace: t.Name() + "own"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if own.HandoffGapUs != nil {
		t.Errorf("hand-offs without contention: %+v", own.HandoffGapUs)
	}
	if own.Fairness.Starved != 0 {
		t.Errorf("a client starved on its own lock: %+v", own.Fairness)
	}
}

// A lock that serves 100/s offered 200/s: latency from the intended
// arrival grows with the queue, the service time does not.
func TestOpenLoopShowsQueueingServiceTimeDoesNot(t *testing.T) {
	t.Parallel()
	const hold = 10 * time.Millisecond
	cell, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "rate"), Clients: 1, Rate: 200, MaxInflight: 1000,
		Duration: time.Second, Hold: hold, Config: impl.Config{Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := cell.Open
	if o == nil || o.Offered < 150 || o.Dropped != 0 {
		t.Fatalf("open loop %+v", o)
	}
	// Room for every arrival: all are served, the late ones late.
	if cell.Acquires != o.Offered || o.Unfinished != 0 {
		t.Errorf("offered %d, served %d, unfinished %d", o.Offered, cell.Acquires, o.Unfinished)
	}
	holdUs := float64(hold / time.Microsecond)
	if cell.AcquireLatencyUs.P99 < 10*holdUs {
		t.Errorf("corrected p99 %.0fµs: the queue of ~%d arrivals does not show", cell.AcquireLatencyUs.P99, o.Offered/2)
	}
	if o.ServiceLatencyUs.P99 > holdUs {
		t.Errorf("service p99 %.0fµs exceeds one hold on an uncontended lock", o.ServiceLatencyUs.P99)
	}

	// With no room to queue, surplus arrivals are dropped, not delayed.
	tight, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "rate"), Clients: 1, Rate: 200, Arrival: engine.ArrivalPoisson,
		Duration: time.Second, Hold: hold, Config: impl.Config{Namespace: t.Name() + "tight", Seed: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	if tight.Open.Dropped == 0 || tight.Open.MaxInflight != 1 {
		t.Errorf("max-inflight 1 at twice the capacity dropped nothing: %+v", tight.Open)
	}
	if tight.AcquireLatencyUs.P99 > 3*holdUs {
		t.Errorf("with drops, corrected p99 %.0fµs should stay near one hold", tight.AcquireLatencyUs.P99)
	}
}

func TestRateNeedsARate(t *testing.T) {
	t.Parallel()
	_, err := engine.RunCell(context.Background(), engine.CellSpec{Impl: "inproc", Scenario: scenario(t, "rate"), Clients: 1, Duration: time.Second})
	if err == nil {
		t.Fatal("rate without --rate accepted")
	}
}

func TestRampRunsAStaircaseOverOneSetOfClients(t *testing.T) {
	t.Parallel()
	r, err := engine.ParseRamp("1:2:300ms")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Stairs(6); len(got) != 4 || got[0] != 1 || got[1] != 3 || got[2] != 5 || got[3] != 6 {
		t.Fatalf("stairs to 6: %v", got)
	}
	res, err := engine.RunRamp(context.Background(), engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 5, Hold: 100 * time.Microsecond,
		Warmup: 50 * time.Millisecond, Config: impl.Config{Namespace: t.Name()},
	}, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("%d stairs, want 3", len(res))
	}
	for i, want := range []int{1, 3, 5} {
		c := res[i].Cell
		if c.Clients != want || c.Acquires == 0 || c.DurationS < 0.3 || c.DurationS > 0.31 || len(c.Fairness.PerClient) != want {
			t.Errorf("stair %d: clients %d acquires %d over %.3fs", i, c.Clients, c.Acquires, c.DurationS)
		}
	}
	for _, bad := range []string{"4:4", "0:1:1s", "1:0:1s", "1:1:0s", "a:1:1s"} {
		if _, err := engine.ParseRamp(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCountedOpenLoopServesEveryArrivalLetIn(t *testing.T) {
	t.Parallel()
	cell, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "rate"), Clients: 2, Rate: 500, MaxInflight: 100,
		Acquires: 200, Hold: time.Millisecond, Config: impl.Config{Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cell.Open.Offered != 200 || cell.Acquires+cell.Open.Dropped != 200 {
		t.Errorf("offered %d, served %d, dropped %d: every arrival let in must be served", cell.Open.Offered, cell.Acquires, cell.Open.Dropped)
	}
}

// Every arrival is accounted for: served, dropped, failed or unfinished —
// none silently lost at the end of the cell, where the slowest are.
func TestTimedOpenLoopAccountsForEveryArrival(t *testing.T) {
	t.Parallel()
	cell, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "rate"), Clients: 4, Rate: 200, MaxInflight: 40,
		Duration: time.Second, Hold: 20 * time.Millisecond, Config: impl.Config{Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := cell.Open
	if got := cell.Acquires + o.Dropped + cell.Errors + o.Unfinished; got != o.Offered {
		t.Errorf("offered %d = served %d + dropped %d + errors %d + unfinished %d = %d", o.Offered, cell.Acquires, o.Dropped, cell.Errors, o.Unfinished, got)
	}
	if o.Dropped == 0 || cell.Acquires == 0 {
		t.Errorf("at 4× the capacity with room for 40: %+v, %d served", o, cell.Acquires)
	}
}

func TestMaxTimeTruncationIsReported(t *testing.T) {
	t.Parallel()
	cell, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 2, Acquires: 1_000_000, Hold: time.Millisecond,
		MaxTime: 200 * time.Millisecond, Config: impl.Config{Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cell.Truncated == "" || cell.Acquires >= 1_000_000 {
		t.Errorf("a cell cut short by its time limit says %q after %d acquisitions", cell.Truncated, cell.Acquires)
	}
	done, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 2, Acquires: 10, Config: impl.Config{Namespace: t.Name() + "done"},
	})
	if err != nil || done.Truncated != "" {
		t.Errorf("a finished cell reported truncated: %q %v", done.Truncated, err)
	}
}

func scenario(t testing.TB, name string) engine.Scenario {
	s, ok := engine.LookupScenario(name)
	if !ok {
		t.Fatalf("no scenario %s", name)
	}
	return s
}

// --repeat applies to scenarios that repeat (burst, and the faults'
// scripts); on a closed loop it is refused rather than ignored.
func TestRepeatIsRefusedWhereItDoesNotApply(t *testing.T) {
	t.Parallel()
	_, err := engine.RunCell(context.Background(), engine.CellSpec{Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 2,
		Acquires: 10, Repeat: 3, Config: impl.Config{Namespace: t.Name()}})
	if !errors.Is(err, engine.ErrUsage) || !strings.Contains(err.Error(), "--repeat 3 does not apply to scenario hot") {
		t.Fatalf("hot with --repeat 3: %v, want a usage error", err)
	}
	c, err := engine.RunCell(context.Background(), engine.CellSpec{Impl: "inproc", Scenario: scenario(t, "burst"), Clients: 4,
		Repeat: 3, Config: impl.Config{Namespace: t.Name() + "burst"}})
	if err != nil || c.Repeats != 3 || c.Acquires != 12 {
		t.Fatalf("burst with --repeat 3: %d repeats, %d acquires, %v; want 3 and 12", c.Repeats, c.Acquires, err)
	}
}

// countingLocker counts the acquisitions an inproc lock grants.
type countingLocker struct {
	impl.Locker
	n *atomic.Int64
}

func (c countingLocker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	l, err := c.Locker.Acquire(ctx, name)
	if err == nil {
		c.n.Add(1)
	}
	return l, err
}

// countingBurst is inproc counting its grants in countingBurstGranted.
const countingBurst = "test-counting-burst"

var countingBurstGranted atomic.Int64

func init() {
	inproc, _ := impl.Lookup("inproc")
	d := inproc
	d.Name = countingBurst
	d.New = func(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
		l, err := inproc.New(ctx, cfg)
		return countingLocker{l, &countingBurstGranted}, err
	}
	impl.Register(d)
}

// A burst's warm-up is one whole burst, discarded: the servers then meet
// the measured burst's code path warm. With --warmup 0 there is none.
func TestBurstWarmsUpWithADiscardedBurst(t *testing.T) {
	t.Parallel()
	granted := &countingBurstGranted // the driver's, set to zero before each cell
	for _, tc := range []struct {
		warmup       time.Duration
		repeat       int
		wantGranted  int64
		wantAcquires int64
	}{
		{0, 1, 8, 8},
		{time.Second, 1, 16, 8},
		{time.Second, 3, 32, 24},
	} {
		granted.Store(0)
		var seen atomic.Int64 // acquisitions in the intervals the cell's observer got
		cell, err := engine.RunCell(context.Background(), engine.CellSpec{
			Impl: countingBurst, Scenario: scenario(t, "burst"), Clients: 8, Warmup: tc.warmup, Repeat: tc.repeat,
			Config: impl.Config{Namespace: fmt.Sprintf("%s-%v-%d", t.Name(), tc.warmup, tc.repeat)},
			OnInterval: func(_ result.Cell, _ time.Time, iv hlog.Interval) {
				if iv.Acquire != nil {
					seen.Add(iv.Acquire.TotalCount())
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if seen.Load() != tc.wantAcquires {
			t.Errorf("warm-up %v, %d repeats: the intervals held %d acquisitions, want %d (none of the warm-up's)", tc.warmup, tc.repeat, seen.Load(), tc.wantAcquires)
		}
		if granted.Load() != tc.wantGranted || cell.Acquires != tc.wantAcquires {
			t.Errorf("warm-up %v, %d repeats: the lock granted %d, the cell counted %d; want %d and %d (the warm-up burst granted, not counted)",
				tc.warmup, tc.repeat, granted.Load(), cell.Acquires, tc.wantGranted, tc.wantAcquires)
		}
	}
}

// The wait scenario: one holder for the whole cell, the others waiting
// and never granted; a lock that grants everyone at once (inproc-unsafe)
// shows in Granted.
func TestWaitHoldsWhileOthersWait(t *testing.T) {
	t.Parallel()
	for _, unsafe := range []bool{false, true} {
		cfg := impl.Config{Namespace: fmt.Sprintf("%s-%v", t.Name(), unsafe)}
		if unsafe {
			cfg.Options = map[string]string{"inproc-unsafe": "true"}
		}
		cell, err := engine.RunCell(context.Background(), engine.CellSpec{
			Impl: "inproc", Scenario: scenario(t, "wait"), Clients: 5, Duration: 300 * time.Millisecond, Config: cfg,
		})
		if err != nil {
			t.Fatal(err)
		}
		w := cell.Wait
		if w == nil || w.Waiters != 4 || w.WaitS <= 0 || w.WaitS > 0.3 {
			t.Fatalf("unsafe=%v: wait figures %+v, want 4 waiters over at most the cell", unsafe, w)
		}
		if !unsafe && (w.Granted != 0 || cell.Acquires != 1) {
			t.Errorf("a safe lock granted %d waiters (%d acquisitions) while its holder held it", w.Granted, cell.Acquires)
		}
		if unsafe && w.Granted == 0 {
			t.Error("a lock granting everyone at once showed no waiter granted")
		}
		if _, ok := result.WaitCostOf(cell); !ok {
			t.Error("no cost of waiting derived")
		}
	}
}
