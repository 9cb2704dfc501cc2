package exclusion

import (
	"github.com/lockbench/lockbench/result"
	"testing"
	"time"
)

func TestCheckerTokenRegression(t *testing.T) {
	t.Parallel()
	now := time.Now()
	k := NewChecker(now, 1, result.LockName)
	for client, tok := range []uint64{0, 5} { // a first token of 0 is fine
		v := k.Enter(0, client, tok, true, now)
		k.Exit(v, client, now)
	}
	v := k.Enter(0, 2, 4, true, now) // lower token granted later
	k.Exit(v, 2, now)
	v = k.Enter(0, 3, 5, true, now) // the same token twice
	k.Exit(v, 3, now)
	n, list := k.Violations()
	if n != 2 || list[0].Kind != "token_regression" || list[0].Token != 4 || list[0].PrevToken != 5 || list[1].Token != 5 ||
		list[0].Intruder != 2 || list[0].Holder != 1 {
		t.Fatalf("got %d %+v", n, list)
	}
}

// Each hand-off is measured from the release that freed the lock for it,
// whatever order the clients hear their replies in.
func TestHandoffPairsEachGrantWithItsRelease(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	k := NewChecker(t0, 1, result.LockName)
	if _, ok := k.Handoff(0, at(0), at(1)); ok { // A takes a free lock
		t.Fatal("a free lock counted as a hand-off")
	}
	k.Released(0, at(10))                                                         // A calls release
	if gap, ok := k.Handoff(0, at(2), at(12)); !ok || gap != 2*time.Millisecond { // B, waiting since 2
		t.Fatalf("B: %v %v", gap, ok)
	}
	k.Released(0, at(17))                                                       // B holds 5 ms and calls release
	if gap, ok := k.Handoff(0, at(3), at(18)); !ok || gap != time.Millisecond { // C, waiting since 3
		t.Fatalf("C: %v %v, want 1ms, not B's hold", gap, ok)
	}
	if _, ok := k.Handoff(0, at(20), at(21)); ok { // D came after the last release
		t.Fatal("an acquire of a free lock counted as a hand-off")
	}
}

// Beyond denseLocks the checker keeps only the locks used, and still sees
// an overlap on one of them, by its name.
func TestCheckerOfAMillionLocks(t *testing.T) {
	t0 := time.Now()
	k := NewChecker(t0, 1_000_000, result.LockName)
	if k.locks != nil {
		t.Fatal("a million locks got a dense array")
	}
	a := k.Enter(900_001, 0, 0, false, t0)
	b := k.Enter(900_001, 1, 0, false, t0.Add(time.Millisecond))
	k.Exit(b, 1, t0.Add(2*time.Millisecond))
	k.Exit(a, 0, t0.Add(3*time.Millisecond))
	n, vs := k.Violations()
	if n != 1 || vs[0].Lock != "lock-900001" {
		t.Errorf("%d violations %+v, want one on lock-900001", n, vs)
	}
}

// Checking grants after the fact tells definite overlaps from ones within
// the clocks' skew: two sources' grants may seem to overlap by up to the
// sum of their skew bounds without proving anything; one source's never
// may. Of one client's own holdings none is a second holder.
func TestCheckSeparatesSkewFromViolations(t *testing.T) {
	t.Parallel()
	g := func(src, client int, enter, exit int64, token uint64, fenced bool) SourcedGrant {
		return SourcedGrant{Grant: result.Grant{Enter: enter, Exit: exit, Token: token, Fenced: fenced, Client: int32(client)}, Source: src}
	}
	bound := []int64{50, 50} // ns: two sources, ±50 ns each
	for _, tc := range []struct {
		name           string
		gs             []SourcedGrant
		definite, poss int64
		kind           string
		overlapUs      float64
		order          string
	}{
		{"in order", []SourcedGrant{g(0, 0, 0, 100, 1, true), g(1, 1, 200, 300, 2, true)}, 0, 0, "", 0, "fencing token"},
		{"within skew", []SourcedGrant{g(0, 0, 0, 100, 1, true), g(1, 1, 40, 300, 2, true)}, 0, 1, "", 0, "fencing token"},
		{"beyond skew", []SourcedGrant{g(0, 0, 0, 1000, 1, true), g(1, 1, 500, 1300, 2, true)}, 1, 0, "overlap", 0.5, "fencing token"},
		{"one clock", []SourcedGrant{g(0, 0, 0, 100, 1, true), g(0, 1, 90, 300, 2, true)}, 1, 0, "overlap", 0.01, "fencing token"},
		{"inside another", []SourcedGrant{g(0, 0, 0, 10_000, 0, false), g(0, 1, 4000, 6000, 0, false)}, 1, 0, "overlap", 2, "wall clock"},
		{"one client's own", []SourcedGrant{g(0, 0, 0, 100, 0, false), g(0, 0, 50, 200, 0, false)}, 0, 0, "", 0, "wall clock"},
		{"same token", []SourcedGrant{g(0, 0, 0, 100, 7, true), g(1, 1, 500, 600, 7, true)}, 1, 0, "token_duplicate", 0, "fencing token"},
		{"token against time", []SourcedGrant{g(0, 0, 1000, 1100, 1, true), g(1, 1, 0, 100, 2, true)}, 1, 0, "token_regression", 0, "fencing token"},
		{"unfenced within skew", []SourcedGrant{g(0, 0, 0, 100, 0, false), g(1, 1, 30, 300, 0, false)}, 0, 1, "", 0, "wall clock"},
		{"unfenced overlap", []SourcedGrant{g(0, 0, 0, 1000, 0, false), g(1, 1, 10, 300, 0, false), g(0, 2, 2000, 2100, 0, false)}, 1, 0, "overlap", 0.29, "wall clock"},
	} {
		k := NewChecker(time.Time{}, 0, result.LockName)
		order := k.Check(tc.gs, bound)
		n, vs := k.Violations()
		if n != tc.definite || k.PossibleOverlaps() != tc.poss || order != tc.order {
			t.Errorf("%s: %d violations, %d possible, by %s; want %d, %d, by %s", tc.name, n, k.PossibleOverlaps(), order, tc.definite, tc.poss, tc.order)
		}
		if tc.kind != "" && (len(vs) == 0 || vs[0].Kind != tc.kind || vs[0].OverlapUs != tc.overlapUs || vs[0].Lock != "lock-0") {
			t.Errorf("%s: violations %+v, want kind %s overlapping %gµs on lock-0", tc.name, vs, tc.kind, tc.overlapUs)
		}
	}
}
