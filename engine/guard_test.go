package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
)

// memGuard is the guarded register kept in process, for the harness's
// tests with locks that have no servers: the Redis scripts' rules, under
// one mutex instead of one script step.
type memGuard struct {
	mu    sync.Mutex
	locks map[string]*memCounters
}

type memCounters struct {
	fenced, unfenced int64
	highest          uint64
}

func (m *memGuard) open(context.Context, impl.Config, []string) (impl.Guard, error) {
	return memClient{m}, nil
}

type memClient struct{ m *memGuard }

func (c memClient) of(lock string) *memCounters {
	k := c.m.locks[lock]
	if k == nil {
		k = &memCounters{}
		c.m.locks[lock] = k
	}
	return k
}

func (c memClient) Read(_ context.Context, lock string, token uint64) (impl.Reading, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	k := c.of(lock)
	r := impl.Reading{Fenced: k.fenced, Unfenced: k.unfenced, Refused: token < k.highest}
	k.highest = max(k.highest, token)
	return r, nil
}

func (c memClient) Write(_ context.Context, lock string, token uint64, r impl.Reading) (impl.Written, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	k := c.of(lock)
	w := impl.Written{UnfencedMoved: k.unfenced - r.Unfenced}
	k.unfenced = r.Unfenced + 1
	if !r.Refused && token >= k.highest {
		w.FencedAccepted, w.FencedMoved = true, k.fenced-r.Fenced
		k.fenced, k.highest = r.Fenced+1, token
	}
	return w, nil
}

func (c memClient) Values(_ context.Context, lock string) (int64, int64, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	k := c.of(lock)
	return k.fenced, k.unfenced, nil
}

func (memClient) Close() error { return nil }

// A lock that lets a second holder in while the first holds it loses
// updates to the unfenced counter, and the fenced one refuses the stale
// holder's write, losing none; a correct lock loses none either way. The
// lost updates are what the final values fall short of the acknowledged
// increments by, so the per-write figures and the counters agree.
func TestGuardCountsLostUpdatesOfOverlappingHolders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		impl   string
		broken bool
	}{{"test-overlap", true}, {"inproc", false}} {
		t.Run(tc.impl, func(t *testing.T) {
			t.Parallel()
			m := &memGuard{locks: map[string]*memCounters{}}
			cell, err := engine.RunCell(context.Background(), engine.CellSpec{
				Impl: tc.impl, Scenario: scenario(t, "hot"), Clients: 4, Duration: 400 * time.Millisecond,
				Hold: time.Millisecond, Guard: true, GuardFunc: m.open, Config: impl.Config{Namespace: t.Name()},
			})
			if err != nil {
				t.Fatal(err)
			}
			s := cell.Safety
			if s == nil || !s.Guarded || s.GuardedWrites < 10 {
				t.Fatalf("safety %+v: want the guarded register written at least 10 times", s)
			}
			fenced, unfenced, _ := memClient{m}.Values(context.Background(), "lock-0")
			t.Logf("%s: %d grants, %d overlaps, %d writes: unfenced %d lost in %d stale writes; fenced %d refused, %d lost; final %d / %d",
				tc.impl, cell.Acquires, s.Overlaps, s.GuardedWrites, s.LostUpdates, s.StaleWritesUnfenced,
				s.StaleWritesRefused, s.LostUpdatesFenced, fenced, unfenced)
			if got := s.GuardedWrites - s.LostUpdates; got != unfenced {
				t.Errorf("unfenced: %d writes less %d lost = %d, but the counter reads %d", s.GuardedWrites, s.LostUpdates, got, unfenced)
			}
			if s.LostUpdatesFenced != 0 || s.StaleWritesFenced != 0 {
				t.Errorf("the fenced counter lost %d updates in %d stale writes: its tokens were in order", s.LostUpdatesFenced, s.StaleWritesFenced)
			}
			if !tc.broken {
				if s.LostUpdates != 0 || s.StaleWritesRefused != 0 || s.Overlaps != 0 {
					t.Errorf("a correct lock: %d lost updates, %d refused, %d overlaps", s.LostUpdates, s.StaleWritesRefused, s.Overlaps)
				}
				return
			}
			if s.Overlaps == 0 || s.LostUpdates == 0 || s.StaleWritesUnfenced == 0 {
				t.Errorf("a lock that lets holders overlap: %d overlaps, %d lost updates in %d stale writes, want all > 0",
					s.Overlaps, s.LostUpdates, s.StaleWritesUnfenced)
			}
			if s.StaleWritesRefused == 0 {
				t.Error("the fenced counter refused no stale holder")
			}
			if want := s.GuardedWrites - s.StaleWritesRefused; fenced != want {
				t.Errorf("fenced counter %d, but it took %d writes", fenced, want)
			}
		})
	}
}

// A cell asked to guard a lock whose servers keep no register runs
// unguarded and says why.
func TestGuardWithoutRegisterSaysWhy(t *testing.T) {
	t.Parallel()
	cell, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 2, Duration: 100 * time.Millisecond,
		Guard: true, Config: impl.Config{Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := cell.Safety; s == nil || s.Guarded || s.GuardNote == "" {
		t.Fatalf("safety %+v: want unguarded, with a note", s)
	}
}
