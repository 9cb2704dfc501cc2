package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/inproc"
	"github.com/lockbench/lockbench/result"
)

func scenario(t testing.TB, name string) Scenario {
	s, ok := LookupScenario(name)
	if !ok {
		t.Fatalf("no scenario %s", name)
	}
	return s
}

func TestClosedLoopCountsEveryAcquire(t *testing.T) {
	t.Parallel()
	cell, err := RunCell(context.Background(), CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 4, Acquires: 2000,
		Config: impl.Config{Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cell.Acquires != 2000 {
		t.Errorf("acquires = %d, want 2000", cell.Acquires)
	}
	if cell.Errors != 0 || cell.SafetyViolations != 0 {
		t.Errorf("errors %d, violations %d", cell.Errors, cell.SafetyViolations)
	}
	// Each cycle is one acquire and one release round trip.
	if cell.RoundTrips != 4000 {
		t.Errorf("round trips = %d, want 4000", cell.RoundTrips)
	}
	if cell.AcquireLatencyUs.Max < cell.AcquireLatencyUs.P50 || cell.AcquireLatencyUs.P50 < 1 {
		t.Errorf("implausible latency %+v", cell.AcquireLatencyUs)
	}
	if cell.AcquiresPerS <= 0 || cell.DurationS <= 0 {
		t.Errorf("rate %.1f over %.3fs", cell.AcquiresPerS, cell.DurationS)
	}
}

func TestUncontendedLocksNeverWait(t *testing.T) {
	t.Parallel()
	cell, err := RunCell(context.Background(), CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 4, Locks: 4, Acquires: 400,
		Hold: 100 * time.Microsecond, Config: impl.Config{Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cell.Retries != 0 || cell.Notifications != 0 {
		t.Errorf("own lock per client, yet %d retries, %d notifications", cell.Retries, cell.Notifications)
	}
}

func TestDurationCellStops(t *testing.T) {
	t.Parallel()
	res, err := RunCellDetail(context.Background(), CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 3, Duration: 1500 * time.Millisecond,
		Warmup: 50 * time.Millisecond, Hold: time.Millisecond, Config: impl.Config{Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	cell := res.Cell
	// Measured time is the duration, not duration+warmup; allow the last
	// hold to spill over.
	if cell.DurationS < 1.5 || cell.DurationS > 1.5+0.001 {
		t.Errorf("duration_s = %.4f, want 1.5", cell.DurationS)
	}
	if cell.Acquires == 0 {
		t.Error("no acquires")
	}
	// The timeline holds every measured acquisition, second by second.
	if len(res.Intervals) != 2 {
		t.Fatalf("%d intervals in 1.5 s, want 2", len(res.Intervals))
	}
	var sum, rel int64
	for i, iv := range res.Intervals {
		if want := res.Start.Add(time.Duration(i) * result.IntervalLength); !iv.Start.Equal(want) {
			t.Errorf("interval %d starts at %v, want %v", i, iv.Start, want)
		}
		sum += iv.Acquire.TotalCount()
		rel += iv.Release.TotalCount()
	}
	if sum != cell.Acquires || rel < cell.Acquires-3 || rel > cell.Acquires {
		t.Errorf("intervals hold %d acquires and %d releases, cell %d", sum, rel, cell.Acquires)
	}

	dir := t.TempDir()
	if err := result.WriteCellLog(dir, res.Cell, res.Start, res.Intervals, "lockbench test"); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, result.CellFile(cell)+".hlog"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := hdrhistogram.NewHistogramLogReader(f)
	tags := map[string]int64{}
	var lastEnd, lastStart int64
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		tags[h.Tag()] += h.TotalCount()
		lastStart, lastEnd = h.StartTimeMs(), h.EndTimeMs()
	}
	// 1.5 s measured: the second interval covers half a second.
	if d := lastEnd - lastStart; d < 450 || d > 550 {
		t.Errorf("last interval stamped %d ms long, want the 500 ms it covered", d)
	}
	if tags[result.TagAcquire] != cell.Acquires || tags[result.TagRelease] != rel {
		t.Errorf("hlog read back %v, want acquire=%d release=%d", tags, cell.Acquires, rel)
	}
}

func TestBurstWakesEachWaiterOnce(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 8, 32} {
		cell, err := RunCell(context.Background(), CellSpec{
			Impl: "inproc", Scenario: scenario(t, "burst"), Clients: n,
			Hold: 200 * time.Microsecond, Config: impl.Config{Namespace: t.Name()},
		})
		if err != nil {
			t.Fatal(err)
		}
		if cell.Acquires != int64(n) {
			t.Errorf("n=%d: acquires %d", n, cell.Acquires)
		}
		if cell.Wakeups != int64(n-1) {
			t.Errorf("n=%d: wakeups %d, want %d", n, cell.Wakeups, n-1)
		}
		if cell.TheoryWakeups == nil || *cell.TheoryWakeups != int64(n-1) {
			t.Errorf("n=%d: theory %v", n, cell.TheoryWakeups)
		}
		if cell.Settle != "exact" {
			t.Errorf("n=%d: settle %q", n, cell.Settle)
		}
	}
}

func TestCheckerSeesOverlapsOfAnUnsafeLock(t *testing.T) {
	t.Parallel()
	cell, err := RunCell(context.Background(), CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 4, Acquires: 200, Hold: 200 * time.Microsecond,
		Config: impl.Config{Namespace: t.Name(), Options: map[string]string{inproc.OptUnsafe: "true"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cell.SafetyViolations == 0 || len(cell.Violations) == 0 {
		t.Fatalf("no violations from a lock that excludes nobody")
	}
	var v *result.Violation
	for i := range cell.Violations {
		if cell.Violations[i].Kind == "overlap" {
			v = &cell.Violations[i]
			break
		}
	}
	if v == nil {
		t.Fatalf("no overlap among %+v", cell.Violations)
	}
	if v.Holder == v.Intruder || v.Lock != "lock-0" || v.OverlapUs <= 0 {
		t.Errorf("bad violation %+v", *v)
	}
	if int64(len(cell.Violations)) > cell.SafetyViolations {
		t.Errorf("kept %d of %d", len(cell.Violations), cell.SafetyViolations)
	}
}

func TestSpecErrorsAreUsage(t *testing.T) {
	t.Parallel()
	cases := map[string]CellSpec{
		"unknown impl":        {Impl: "nope", Clients: 1, Duration: time.Second},
		"no clients":          {Impl: "inproc", Clients: 0, Duration: time.Second},
		"duration & acquires": {Impl: "inproc", Clients: 1, Duration: time.Second, Acquires: 5},
		"neither":             {Impl: "inproc", Clients: 1},
	}
	for name, spec := range cases {
		if _, err := RunCell(context.Background(), spec); !errors.Is(err, ErrUsage) {
			t.Errorf("%s: want ErrUsage, got %v", name, err)
		}
	}
}

var failingDials atomic.Int64

type closeCounter struct{ impl.Locker }

var closed atomic.Int64

func (c closeCounter) Close() error { closed.Add(1); return c.Locker.Close() }

func init() {
	impl.Register(impl.Driver{Name: "test-fails-third", New: func(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
		if cfg.Client == 2 {
			failingDials.Add(1)
			return nil, impl.ErrUnreachable
		}
		l, _ := inproc.New(ctx, cfg)
		return closeCounter{l}, nil
	}})
}

func TestConnectFailureClosesTheRest(t *testing.T) {
	_, err := RunCell(context.Background(), CellSpec{Impl: "test-fails-third", Clients: 5, Duration: time.Second, ConnectParallel: 1})
	if !errors.Is(err, impl.ErrUnreachable) {
		t.Fatalf("want ErrUnreachable, got %v", err)
	}
	// With one connect at a time, clients 0 and 1 were made and must be closed.
	if closed.Load() != 2 {
		t.Errorf("closed %d clients, want 2", closed.Load())
	}
}

func TestRecordingPathAllocatesNothing(t *testing.T) {
	l, _ := inproc.New(context.Background(), impl.Config{Namespace: t.Name()})
	w := newWorker(0, l, 1)
	newIntervals(time.Now(), []*Client{w}, nil)
	k := result.NewChecker(time.Now(), 1, result.LockName)
	allocs := testing.AllocsPerRun(1000, func() {
		t0 := time.Now()
		w.recordAcquire(t0, time.Since(t0)+3*time.Millisecond)
		v := k.Enter(0, 0, 1, false, t0)
		k.Exit(v, 0, time.Now())
		w.Record(TagRelease, t0, 2*time.Hour) // beyond range: clamped, no error value
		w.Record(TagLag, t0, time.Microsecond)
		k.Released(0, t0)
		k.Handoff(0, t0, time.Now())
	})
	if allocs != 0 {
		t.Fatalf("recording path allocates %.1f times per cycle", allocs)
	}
}

func TestLiveBucketsBracketValues(t *testing.T) {
	t.Parallel()
	for _, us := range []int64{0, 1, 3, 4, 7, 8, 100, 999, 12345, 1 << 40} {
		b := liveBucket(us)
		if hi := liveValue(b); hi < us || (us >= 8 && float64(hi) > float64(us)*1.26) {
			t.Errorf("us=%d bucket %d upper edge %d", us, b, hi)
		}
		if b > 0 && liveValue(b-1) > us {
			t.Errorf("us=%d: previous bucket edge %d above it", us, liveValue(b-1))
		}
	}
}

func TestRunningOutOfFilesIsSaidAsSuch(t *testing.T) {
	err := connectError("x", 7, fmt.Errorf("dial: %w", syscall.EMFILE))
	if !errors.Is(err, syscall.EMFILE) || !strings.Contains(err.Error(), "out of file descriptors") {
		t.Errorf("EMFILE reads %q", err)
	}
	if err := connectError("x", 7, errors.New("refused")); strings.Contains(err.Error(), "file descriptors") {
		t.Errorf("a refused connection reads %q", err)
	}
}

// With no hold, clients queued on one lock still get a hand-off gap: the
// release is timed when it is called, after the grant, never at the grant
// (a release stamped with its grant's time looks like no release at all).
func TestZeroHoldHandOffsAreTimed(t *testing.T) {
	t.Parallel()
	cell, err := RunCell(context.Background(), CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 4, Locks: 1, Duration: 200 * time.Millisecond,
		Config: impl.Config{Namespace: t.Name()}, // a duration: one client could spend a budget alone
	})
	if err != nil {
		t.Fatal(err)
	}
	if h := cell.HandoffGapUs; h == nil || h.Max <= 0 {
		t.Fatalf("4 clients on one lock with no hold: hand-off gap %+v, want one measured", h)
	}
}
