package report

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

func TestSafetyNamesPossibleOverlapsApart(t *testing.T) {
	t.Parallel()
	c := result.Cell{Impl: "x", Scenario: "hot", Kind: result.KindClosed, Clients: 8, Acquires: 10, DurationS: 1,
		Merge: &result.MergeNote{Shards: 2, PossibleOverlaps: 3}}
	v := Verdict([]Cell{c}, nil)[0]
	if v.Question != "Safety" || v.Bad || !strings.Contains(v.Answer, "3 possible overlaps within the shards' clock skew (x hot with 8 clients)") ||
		strings.Contains(v.Answer, "UNSAFE") {
		t.Errorf("safety line %+v", v)
	}
}
