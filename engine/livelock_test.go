package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// stuckLocker never grants: every attempt fails as a split vote, or with
// fail's error when set, until ctx ends.
type stuckLocker struct {
	c    impl.Counters
	fail error
}

func (l *stuckLocker) Acquire(ctx context.Context, _ string) (impl.Lease, error) {
	for {
		l.c.Retries.Add(1)
		if l.fail != nil {
			return nil, l.fail
		}
		l.c.SplitVotes.Add(1)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

func (l *stuckLocker) Counters() *impl.Counters { return &l.c }
func (l *stuckLocker) Close() error             { return nil }

func init() {
	for name, fail := range map[string]error{"test-stuck": nil, "test-down": fmt.Errorf("test: %w", impl.ErrUnreachable)} {
		impl.Register(impl.Driver{Name: name, New: func(context.Context, impl.Config) (impl.Locker, error) {
			return &stuckLocker{fail: fail}, nil
		}})
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
	if got := livelockLimit(cfg.Retry, cfg.TTL); got != 200*time.Millisecond {
		t.Fatalf("limit %v, want max(20×10ms, 2×50ms) = 200ms", got)
	}
	cfg.Namespace = "stuck"
	c, err := RunCell(context.Background(), CellSpec{Impl: "test-stuck", Scenario: scenario(t, "hot"), Clients: 3,
		Duration: time.Minute, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	l := c.Livelock
	if c.Finding != result.FindingLivelock || l == nil || l.LimitS != 0.2 || l.AtS >= 60 || l.SplitVotes == 0 || l.Attempts < l.SplitVotes {
		t.Fatalf("finding %q, livelock %+v", c.Finding, l)
	}
	if c.Verdict == "" || c.Acquires != 0 || c.Truncated != "" {
		t.Errorf("verdict %q, acquires %d, truncated %q", c.Verdict, c.Acquires, c.Truncated)
	}

	cfg.Namespace = "down"
	c, err = RunCell(context.Background(), CellSpec{Impl: "test-down", Scenario: scenario(t, "hot"), Clients: 3,
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
		c, err := RunCell(context.Background(), CellSpec{Impl: tc.impl, Scenario: scenario(t, "hot"), Clients: 2,
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
