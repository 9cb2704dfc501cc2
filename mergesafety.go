package lockbench

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/lockbench/lockbench/result"
)

// shardGrant is a grant with its shard and its times on the servers'
// clock (the shard's clock corrected by its measured offset).
type shardGrant struct {
	result.Grant
	shard int
}

// checkGrants checks mutual exclusion over every shard's grants of cell
// c, per lock: in fencing-token order where every grant of the lock has a
// token, in wall-clock order otherwise. Two grants of one shard compare
// exactly (one clock); of two shards, an overlap no longer than the sum of
// their skew bounds is only possible, and is counted apart.
func checkGrants(shards []shardDir, c *result.Cell) error {
	bound := make([]int64, len(shards))
	by := map[int32][]shardGrant{}
	var n int64
	for i, s := range shards {
		var off int64
		if sk := s.meta.Shard.Skew; sk != nil {
			off, bound[i] = int64(math.Round(sk.OffsetUs*1e3)), int64(math.Ceil(sk.BoundUs*1e3))
		}
		err := result.ReadGrants(s.dir, *c, func(g result.Grant) {
			g.Enter += off
			g.Exit += off
			by[g.Lock] = append(by[g.Lock], shardGrant{g, i})
			n++
		})
		if err != nil {
			return fmt.Errorf("lockbench: shard %d (%s): %w", s.meta.Shard.Index, s.dir, err)
		}
	}
	c.Merge.Grants = n
	c.Merge.By = "wall clock"
	locks := make([]int32, 0, len(by))
	for l := range by {
		locks = append(locks, l)
	}
	slices.Sort(locks)
	for _, l := range locks {
		gs := by[l]
		fenced := !slices.ContainsFunc(gs, func(g shardGrant) bool { return !g.Fenced })
		if fenced {
			c.Merge.By = "fencing token"
			slices.SortFunc(gs, func(a, b shardGrant) int { return cmp.Or(cmp.Compare(a.Token, b.Token), cmp.Compare(a.Enter, b.Enter)) })
		} else {
			slices.SortFunc(gs, func(a, b shardGrant) int { return cmp.Compare(a.Enter, b.Enter) })
		}
		scanGrants(gs, fenced, bound, c)
	}
	return nil
}

// scanGrants walks one lock's ordered grants against the latest exit so
// far: a grant entering before it overlaps the holder of that exit.
func scanGrants(gs []shardGrant, fenced bool, bound []int64, c *result.Cell) {
	lock := fmt.Sprintf("lock-%d", gs[0].Lock)
	var last shardGrant // the grant with the latest exit so far
	for i, g := range gs {
		if i > 0 {
			slack := int64(0)
			if g.shard != last.shard {
				slack = bound[g.shard] + bound[last.shard]
			}
			v := result.Violation{Lock: lock, Holder: int(last.Client), Intruder: int(g.Client),
				Token: g.Token, PrevToken: last.Token}
			prev := gs[i-1]
			switch over := last.Exit - g.Enter; {
			case fenced && g.Token == prev.Token:
				v.Kind = "token_duplicate"
				addViolation(c, v)
			case fenced && g.Enter+slack < prev.Enter:
				v.Kind, v.Holder, v.PrevToken = "token_regression", int(prev.Client), prev.Token
				addViolation(c, v)
			case over > slack:
				v.Kind, v.OverlapUs = "overlap", float64(over)/1e3
				addViolation(c, v)
			case over > 0:
				c.Merge.PossibleOverlaps++
			}
		}
		if i == 0 || g.Exit > last.Exit {
			last = g
		}
	}
}

func addViolation(c *result.Cell, v result.Violation) {
	c.SafetyViolations++
	if len(c.Violations) < result.MaxViolationsKept {
		c.Violations = append(c.Violations, v)
	}
}
