package lockbench

import (
	"testing"

	"github.com/lockbench/lockbench/result"
)

// The merge's safety check tells definite overlaps from ones within the
// clocks' skew: two shards' grants may seem to overlap by up to the sum of
// their skew bounds without proving anything; one shard's never may.
func TestScanGrantsSeparatesSkewFromViolations(t *testing.T) {
	t.Parallel()
	g := func(shard int, enter, exit int64, token uint64, fenced bool) shardGrant {
		return shardGrant{Grant: result.Grant{Enter: enter, Exit: exit, Token: token, Fenced: fenced, Client: int32(shard)}, shard: shard}
	}
	bound := []int64{50, 50} // ns: two shards, ±50 ns each
	for _, tc := range []struct {
		name           string
		gs             []shardGrant
		fenced         bool
		definite, poss int64
		kind           string
	}{
		{"in order", []shardGrant{g(0, 0, 100, 1, true), g(1, 200, 300, 2, true)}, true, 0, 0, ""},
		{"within skew", []shardGrant{g(0, 0, 100, 1, true), g(1, 40, 300, 2, true)}, true, 0, 1, ""},
		{"beyond skew", []shardGrant{g(0, 0, 1000, 1, true), g(1, 500, 1300, 2, true)}, true, 1, 0, "overlap"},
		{"one clock", []shardGrant{g(0, 0, 100, 1, true), g(0, 90, 300, 2, true)}, true, 1, 0, "overlap"},
		{"same token", []shardGrant{g(0, 0, 100, 7, true), g(1, 500, 600, 7, true)}, true, 1, 0, "token_duplicate"},
		{"token against time", []shardGrant{g(0, 1000, 1100, 1, true), g(1, 0, 100, 2, true)}, true, 1, 0, "token_regression"},
		{"unfenced within skew", []shardGrant{g(0, 0, 100, 0, false), g(1, 30, 300, 0, false)}, false, 0, 1, ""},
		{"unfenced overlap", []shardGrant{g(0, 0, 1000, 0, false), g(1, 10, 300, 0, false), g(0, 2000, 2100, 0, false)}, false, 1, 0, "overlap"},
	} {
		c := &result.Cell{Merge: &result.MergeNote{}}
		scanGrants(tc.gs, tc.fenced, bound, c)
		if c.SafetyViolations != tc.definite || c.Merge.PossibleOverlaps != tc.poss {
			t.Errorf("%s: %d violations, %d possible; want %d, %d", tc.name, c.SafetyViolations, c.Merge.PossibleOverlaps, tc.definite, tc.poss)
		}
		if tc.kind != "" && (len(c.Violations) == 0 || c.Violations[0].Kind != tc.kind) {
			t.Errorf("%s: violations %+v, want kind %s", tc.name, c.Violations, tc.kind)
		}
	}
}
