package report

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

func TestHeadlineNamesPossibleOverlapsApart(t *testing.T) {
	t.Parallel()
	c := result.Cell{Impl: "x", Scenario: "hot", Kind: result.KindClosed, Clients: 8, Acquires: 10, DurationS: 1,
		Merge: &result.MergeNote{Shards: 2, PossibleOverlaps: 3}}
	h := Headlines([]Cell{c})
	if len(h) != 1 || !strings.Contains(h[0], "3 possible overlaps within the shards' clock skew (hot with 8 clients)") ||
		strings.Contains(h[0], "violat") {
		t.Errorf("headline %q", h)
	}
}
