package zk

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// The queue is ordered by sequence number, never by id, in whatever order
// the server lists it.
func TestQueueOrdersBySequenceNotByID(t *testing.T) {
	t.Parallel()
	// Lexically the ids would put c first; the sequence puts a first.
	a := "n-0000aaaaaaaaaaaa0000aaaaaaaaaaaa-0000000010"
	b := "n-8888000000000000888800000000000f-0000000011"
	c := "n-ffff000000000000ffff000000000001-0000000012"
	for _, tc := range []struct {
		me    string
		ahead int
		pred  string
	}{{a, 0, ""}, {b, 1, a}, {c, 2, b}} {
		for _, nodes := range [][]string{{c, a, b}, {b, c, a}, {a, b, c}} {
			ahead, pred, found := standing(nodes, tc.me)
			if !found || ahead != tc.ahead || pred != tc.pred {
				t.Errorf("%s in %v: %d ahead, predecessor %q, found %v; want %d, %q", seqOf(tc.me), nodes, ahead, pred, found, tc.ahead, tc.pred)
			}
		}
	}
	if _, _, found := standing([]string{a, c}, b); found {
		t.Error("a vanished node was found")
	}
}

// A naive waiter tells a release (a node it saw is gone) from an arrival
// (only nodes it did not see are new) by a count and the last node seen.
func TestQueueSeenTellsReleaseFromArrival(t *testing.T) {
	t.Parallel()
	nodes := []string{
		"n-ffff000000000000ffff000000000001-0000000012",
		"n-0000aaaaaaaaaaaa0000aaaaaaaaaaaa-0000000010",
		"n-8888000000000000888800000000000f-0000000011",
	}
	seen := seenOf(nodes)
	if !seen.goneFrom([]string{nodes[0], nodes[1]}) {
		t.Error("a node missing after the re-read was not seen as gone")
	}
	arrived := append(slices.Clone(nodes), "n-0000000000000000000000000000000a-0000000013")
	if seen.goneFrom(arrived) {
		t.Error("an arrival was taken for a release")
	}
	if !seen.goneFrom(arrived[1:]) {
		t.Error("a release beside an arrival was not seen")
	}
	if !seen.goneFrom(nil) || seenOf(nil).goneFrom(nodes) {
		t.Error("an emptied queue, or an empty one seen before")
	}
}

// A node's prefix finds it again after a lost reply (create): no other
// request's prefix may begin with it, and it stays short, since every
// waiter reads every name in the queue twice per acquisition.
func TestNodePrefixIsUniqueAndShort(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	var prefixes []string
	for _, seq := range []uint64{1, 2, 12, 35, 36, 1296, 1 << 40, 1<<64 - 1} {
		p := nodePrefix(seq)
		if seen[p] {
			t.Fatalf("prefix %q twice", p)
		}
		seen[p] = true
		prefixes = append(prefixes, p)
		if name := p + "0000000042"; seqOf(name) != "0000000042" {
			t.Errorf("%s: sequence %q", name, seqOf(name))
		}
	}
	for _, a := range prefixes {
		for _, b := range prefixes {
			if a != b && strings.HasPrefix(b+"0000000001", a) {
				t.Errorf("%q finds %q's node too", a, b)
			}
		}
	}
	if n := len(nodePrefix(1<<20)) + seqDigits; n > 31 {
		t.Errorf("a name of the millionth request is %d bytes, want at most 31 (the hex id made 45)", n)
	}
}

// A naive waiter that read the queue at its latest version is settled;
// once another client of the process deletes its own node after reading
// that version, the waiter is not, before any notification reaches it,
// and is again once it reads the queue past the deletion. A predecessor
// waiter's mark changes nothing.
func TestOwnDeletionUnsettlesNaiveWaiters(t *testing.T) {
	t.Parallel()
	// The versions read are kept for the process: a node created afresh
	// for each run (-count) starts from none.
	parent, created := "/lockbench-test/"+t.Name(), time.Now().UnixNano()
	stat := func(cversion int32) *zk.Stat { return &zk.Stat{Czxid: created, Ctime: created, Cversion: cversion} }
	waiter, leaver := &Locker{mode: Naive}, &Locker{mode: Naive}
	waiter.noteRead(parent, stat(4))
	m := leaver.noteRead(parent, stat(4))
	waiter.armed.Store(true)
	if !waiter.Settled() {
		t.Fatal("a waiter armed at the latest version read is not settled")
	}
	m.deleted()
	if waiter.Settled() {
		t.Error("a waiter is settled after another client deleted its node past the waiter's read")
	}
	waiter.noteRead(parent, stat(5))
	if !waiter.Settled() {
		t.Error("a waiter that read the queue past the deletion is not settled")
	}
	pred := &Locker{mode: Predecessor}
	pred.noteRead(parent, stat(9)).deleted()
	if !waiter.Settled() {
		t.Error("a predecessor waiter's deletion moved the naive queue's version")
	}
}
