package zk

import (
	"slices"
	"testing"
)

func TestQueueOrdersBySequenceNotByID(t *testing.T) {
	// Lexically the ids would put c first; the sequence puts a first.
	nodes := []string{
		"n-ffff000000000000ffff000000000001-0000000012",
		"n-0000aaaaaaaaaaaa0000aaaaaaaaaaaa-0000000010",
		"n-8888000000000000888800000000000f-0000000011",
	}
	slices.SortFunc(nodes, bySeq)
	for i, want := range []string{"0000000010", "0000000011", "0000000012"} {
		if seqOf(nodes[i]) != want {
			t.Fatalf("position %d: %s", i, nodes[i])
		}
	}
	gone := []string{nodes[0], nodes[2]}
	if !seenOf(nodes).goneFrom(gone) {
		t.Error("a node missing after the re-read was not seen as gone")
	}
	arrived := append(slices.Clone(nodes), "n-0000000000000000000000000000000a-0000000013")
	if seenOf(nodes).goneFrom(arrived) {
		t.Error("an arrival was taken for a release")
	}
	if !seenOf(nodes).goneFrom(arrived[1:]) {
		t.Error("a release beside an arrival was not seen")
	}
	if !seenOf(nodes).goneFrom(nil) || seenOf(nil).goneFrom(nodes) {
		t.Error("an emptied queue, or an empty one seen before")
	}
}
