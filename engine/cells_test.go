package engine_test

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/inproc"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
	_ "github.com/lockbench/lockbench/scenarios" // the load scenarios
)

func scenario(t testing.TB, name string) engine.Scenario {
	s, ok := engine.LookupScenario(name)
	if !ok {
		t.Fatalf("no scenario %s", name)
	}
	return s
}

func TestClosedLoopCountsEveryAcquire(t *testing.T) {
	t.Parallel()
	cell, err := engine.RunCell(context.Background(), engine.CellSpec{
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
	cell, err := engine.RunCell(context.Background(), engine.CellSpec{
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
	res, err := engine.RunCellDetail(context.Background(), engine.CellSpec{
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
		if want := res.Start.Add(time.Duration(i) * hlog.IntervalLength); !iv.Start.Equal(want) {
			t.Errorf("interval %d starts at %v, want %v", i, iv.Start, want)
		}
		sum += iv.Acquire.TotalCount()
		rel += iv.Release.TotalCount()
	}
	if sum != cell.Acquires || rel < cell.Acquires-3 || rel > cell.Acquires {
		t.Errorf("intervals hold %d acquires and %d releases, cell %d", sum, rel, cell.Acquires)
	}

	dir := t.TempDir()
	if err := hlog.WriteCell(dir, res.Cell, res.Start, res.Intervals, "lockbench test"); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(result.CellPath(dir, cell, result.HlogExt))
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
		cell, err := engine.RunCell(context.Background(), engine.CellSpec{
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
	cell, err := engine.RunCell(context.Background(), engine.CellSpec{
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

// With no hold, clients queued on one lock still get a hand-off gap: the
// release is timed when it is called, after the grant, never at the grant
// (a release stamped with its grant's time looks like no release at all).
func TestZeroHoldHandOffsAreTimed(t *testing.T) {
	t.Parallel()
	cell, err := engine.RunCell(context.Background(), engine.CellSpec{
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

// The cell time limit bounds a timed cell too: a duration beyond it is
// cut there, and the cell says so.
func TestMaxTimeBoundsATimedCell(t *testing.T) {
	t.Parallel()
	cell, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 2, Duration: time.Hour, Hold: time.Millisecond,
		MaxTime: 300 * time.Millisecond, Config: impl.Config{Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cell.Truncated == "" || cell.DurationS > 0.301 || cell.Acquires == 0 {
		t.Errorf("an hour's cell under a 300ms limit measured %.3fs, %d acquisitions, truncated %q",
			cell.DurationS, cell.Acquires, cell.Truncated)
	}
}

// A timed open loop that ran its whole duration and served every arrival
// is not truncated (it used to be flagged, always).
func TestATimedOpenLoopIsNotTruncated(t *testing.T) {
	t.Parallel()
	cell, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "rate"), Clients: 2, Rate: 200, Duration: 500 * time.Millisecond,
		Config: impl.Config{Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cell.Truncated != "" || cell.Open.Unfinished != 0 || cell.Open.Offered == 0 {
		t.Errorf("truncated %q, %d of %d arrivals unfinished", cell.Truncated, cell.Open.Unfinished, cell.Open.Offered)
	}
}

// With a sink, intervals leave the cell as they close: the result keeps
// none, and what the sink received adds up to the cell's totals exactly.
func TestIntervalsStreamToTheSinkLosingNothing(t *testing.T) {
	t.Parallel()
	var got []hlog.Interval
	var calls atomic.Int64
	res, err := engine.RunCellDetail(context.Background(), engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 4, Duration: 2500 * time.Millisecond,
		Hold: 200 * time.Microsecond, Config: impl.Config{Namespace: t.Name()},
		OnInterval: func(c result.Cell, start time.Time, iv hlog.Interval) {
			calls.Add(1)
			if c.Impl != "inproc" || c.Clients != 4 {
				t.Errorf("interval for cell %+v", c)
			}
			got = append(got, hlog.Interval{Start: iv.Start, End: iv.End,
				Acquire: iv.Acquire.Clone(), Release: iv.Release.Clone()})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Intervals) != 0 {
		t.Errorf("the result kept %d intervals though a sink took them", len(res.Intervals))
	}
	if len(got) < 3 {
		t.Fatalf("%d intervals streamed for 2.5 s", len(got))
	}
	var acq int64
	for i, iv := range got {
		acq += iv.Acquire.TotalCount()
		if i > 0 && !iv.Start.After(got[i-1].Start) {
			t.Errorf("interval %d starts at %v, not after %v", i, iv.Start, got[i-1].Start)
		}
	}
	if acq != res.Acquires {
		t.Errorf("streamed intervals hold %d acquisitions, the cell %d", acq, res.Acquires)
	}
	if last := got[len(got)-1]; !last.End.Before(last.Start.Add(hlog.IntervalLength)) {
		t.Errorf("the last interval is not cut at the cell's end: %v–%v", last.Start, last.End)
	}
}

// A panic in a client ends its cell with an error naming the cell and the
// panic, and with what was measured before it.
func TestAPanicInACellIsRecovered(t *testing.T) {
	t.Parallel()
	res, err := engine.RunCellDetail(context.Background(), engine.CellSpec{
		Impl: "test-panic", Scenario: scenario(t, "hot"), Clients: 1, Duration: 10 * time.Second,
		Config: impl.Config{Namespace: t.Name()},
	})
	if !errors.Is(err, engine.ErrPanic) || res.Impl != "test-panic" || res.Acquires != 9 || res.Truncated == "" {
		t.Errorf("err %v, %d acquisitions kept, truncated %q; want ErrPanic after 9", err, res.Acquires, res.Truncated)
	}
}

// Clients that keep trying and are never granted end the cell with the
// livelock finding once the limit — max(20 retry delays, 2 leases) — has
// passed, long before its duration, and it is a result, not an error.
// Clients that find the server unreachable are not livelocked: their
// cell runs its course.
func TestNoGrantWhileTryingIsALivelock(t *testing.T) {
	t.Parallel()
	cfg := impl.Config{Retry: 10 * time.Millisecond, TTL: 50 * time.Millisecond}
	cfg.Namespace = "stuck"
	c, err := engine.RunCell(context.Background(), engine.CellSpec{Impl: "test-stuck", Scenario: scenario(t, "hot"), Clients: 3,
		Duration: time.Minute, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	l := c.Livelock
	if c.Finding != result.FindingLivelock || l == nil || l.LimitS != 0.2 || l.AtS >= 60 || l.SplitVotes == 0 || l.Attempts < l.SplitVotes {
		t.Fatalf("finding %q, livelock %+v", c.Finding, l)
	}
	// The figures a sentence needs travel with the finding; no sentence.
	if l.LimitRetries != engine.LivelockRetries || l.LimitLeases != engine.LivelockTTLs || c.Verdict != "" ||
		c.Acquires != 0 || c.Truncated != "" {
		t.Errorf("limit %d×retry, %d×lease, verdict %q, acquires %d, truncated %q", l.LimitRetries, l.LimitLeases, c.Verdict, c.Acquires, c.Truncated)
	}

	cfg.Namespace = "down"
	c, err = engine.RunCell(context.Background(), engine.CellSpec{Impl: "test-down", Scenario: scenario(t, "hot"), Clients: 3,
		Duration: time.Second, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if c.Finding != "" || c.Errors == 0 || c.ErrorsByClass[impl.ClassUnreachable] != c.Errors {
		t.Errorf("an unreachable server: finding %q, errors %v", c.Finding, c.ErrorsByClass)
	}
}

// With --acquire-timeout a wait that runs out is an abandonment, not an
// error, and an error before it is an error, not an abandonment.
func TestGivingUpIsNotAnError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		impl            string
		abandons, error bool
	}{{"test-stuck", true, false}, {"test-down", false, true}} {
		c, err := engine.RunCell(context.Background(), engine.CellSpec{Impl: tc.impl, Scenario: scenario(t, "hot"), Clients: 2,
			Duration: 300 * time.Millisecond, AcquireTimeout: 20 * time.Millisecond,
			Config: impl.Config{Namespace: "give-up-" + tc.impl, Retry: 10 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		a := c.Abandon
		if a == nil || a.TimeoutMs != 20 || (a.Count > 0) != tc.abandons || (c.Errors > 0) != tc.error {
			t.Errorf("%s: abandoned %+v, errors %v", tc.impl, a, c.ErrorsByClass)
		}
		if tc.abandons && (a.WaitUs.Max < 20_000 || a.RoundTrips != 0) {
			t.Errorf("%s: gave up before the timeout or counted requests it never sent: %+v", tc.impl, a)
		}
	}
}

// A shard sees only its own clients: none of them holding and all trying
// is what it sees while another shard's client holds the lock. A sharded
// cell therefore never ends in a livelock finding, where the same clients
// in one process would (TestNoGrantWhileTryingIsALivelock).
//
// Not parallel: its retrying clients would load the timing-sensitive
// open-loop tests that run in parallel.
func TestAShardFindsNoLivelock(t *testing.T) {
	cfg := impl.Config{Retry: 10 * time.Millisecond, TTL: 50 * time.Millisecond, Namespace: "stuck-shard"}
	sh := &engine.Shard{Index: 0, Count: 2, Coord: &soloCoord{served: make(chan struct{})}}
	c, err := engine.RunCell(context.Background(), engine.CellSpec{Impl: "test-stuck", Scenario: scenario(t, "hot"), Clients: 4,
		Duration: time.Second, Config: cfg, Shard: sh})
	if err != nil {
		t.Fatal(err)
	}
	if c.Finding != "" || c.Livelock != nil || c.Acquires != 0 || c.Retries == 0 {
		t.Errorf("finding %q, livelock %+v, %d acquires, %d retries; want no finding over a full second of retries", c.Finding, c.Livelock, c.Acquires, c.Retries)
	}
}

// A burst's shard interrupted while it waits for the common start stops
// answering other shards' settle calls and closes its grants' stream: no
// goroutine of the cell outlives it.
func TestAnInterruptedShardLeavesNothingRunning(t *testing.T) {
	coord := &soloCoord{lead: time.Hour, served: make(chan struct{})}
	sh := &engine.Shard{Index: 0, Count: 2, Coord: coord, Grants: func(result.Cell, []result.Grant) {}}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := engine.RunCell(ctx, engine.CellSpec{Impl: "inproc", Scenario: scenario(t, "burst"), Clients: 4,
		Config: impl.Config{Namespace: t.Name()}, Shard: sh})
	if err == nil {
		t.Fatal("a cell interrupted before its start returned no error")
	}
	select {
	case <-coord.served:
	case <-time.After(10 * time.Second):
		t.Fatal("the burst's Serve still runs after the cell returned")
	}
}

// soloCoord is a Coordinator for one shard whose partners are elsewhere:
// it starts after lead and notes when Serve ends.
type soloCoord struct {
	lead   time.Duration
	served chan struct{} // closed when Serve returns
}

func (c *soloCoord) Start(context.Context, engine.Meeting) (time.Time, error) {
	return time.Now().Add(c.lead), nil
}
func (c *soloCoord) Done(context.Context, engine.Meeting) error { return nil }
func (c *soloCoord) Settle(ctx context.Context, _ engine.Meeting, local func(context.Context)) error {
	local(ctx)
	return nil
}
func (c *soloCoord) Serve(ctx context.Context, _ engine.Meeting, _ func(context.Context)) {
	<-ctx.Done()
	close(c.served)
}
