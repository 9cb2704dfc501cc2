package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
)

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
			open := impl.MemoryRegister()
			cell, err := engine.RunCell(context.Background(), engine.CellSpec{
				Impl: tc.impl, Scenario: scenario(t, "hot"), Clients: 4, Duration: 400 * time.Millisecond,
				Hold: time.Millisecond, Guard: true, GuardFunc: open, Config: impl.Config{Namespace: t.Name()},
			})
			if err != nil {
				t.Fatal(err)
			}
			s := cell.Safety
			if s == nil || !s.Guarded || s.GuardedWrites < 10 {
				t.Fatalf("safety %+v: want the guarded register written at least 10 times", s)
			}
			g, _ := open(context.Background(), impl.Config{}, nil)
			fenced, unfenced, _ := g.Values(context.Background(), "lock-0")
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

// A lock whose servers keep no register is guarded by one in this
// process's memory, fresh for each cell — unless the cell is sharded,
// whose processes share no memory.
func TestGuardOpenerFallsBackToMemory(t *testing.T) {
	t.Parallel()
	d := impl.Driver{Name: "lease-only", Needs: []impl.Need{{Role: "kube"}}}
	open, _, why := engine.GuardOpener(engine.CellSpec{}, d)
	if open == nil || why != "" {
		t.Fatalf("no register for a lock with servers: %q", why)
	}
	ctx := context.Background()
	g1, _ := open(ctx, impl.Config{}, nil)
	g2, _ := open(ctx, impl.Config{}, nil)
	r, _ := g1.Read(ctx, "l", 1)
	g1.Write(ctx, "l", 1, r)
	if _, unfenced, _ := g2.Values(ctx, "l"); unfenced != 1 {
		t.Errorf("two clients of one cell see different registers: %d", unfenced)
	}
	other, _, _ := engine.GuardOpener(engine.CellSpec{}, d)
	g3, _ := other(ctx, impl.Config{}, nil)
	if _, unfenced, _ := g3.Values(ctx, "l"); unfenced != 0 {
		t.Errorf("a second cell's register starts at %d", unfenced)
	}
	if open, _, why := engine.GuardOpener(engine.CellSpec{Shard: &engine.Shard{Index: 0, Count: 2}}, d); open != nil || !strings.Contains(why, "sharded") {
		t.Errorf("a sharded cell: %v, %q", open != nil, why)
	}
}
