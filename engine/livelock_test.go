package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
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

// The livelock limit is max(20 retry delays, 2 leases).
func TestLivelockLimit(t *testing.T) {
	if got := livelockLimit(10*time.Millisecond, 50*time.Millisecond); got != 200*time.Millisecond {
		t.Fatalf("limit %v, want max(20×10ms, 2×50ms) = 200ms", got)
	}
}
