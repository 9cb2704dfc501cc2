package plan

import (
	"fmt"
	"math"
	"time"

	"github.com/lockbench/lockbench/exclusion"
	"github.com/lockbench/lockbench/result"
)

// checkGrants reads every shard's grants of cell c onto the servers'
// clock (each shard's clock corrected by its measured offset) and has the
// accumulator check mutual exclusion over them, each shard with the bound
// of its skew.
func checkGrants(shards []shardDir, acc *result.Accumulator, c result.Cell) error {
	bound := make([]int64, len(shards))
	var gs []exclusion.SourcedGrant
	for i, s := range shards {
		var off int64
		if sk := s.meta.Shard.Skew; sk != nil {
			off, bound[i] = int64(math.Round(sk.OffsetUs*1e3)), int64(math.Ceil(sk.BoundUs*1e3))
		}
		err := result.ReadGrants(s.dir, c, func(g result.Grant) {
			g.Enter += off
			g.Exit += off
			gs = append(gs, exclusion.SourcedGrant{Grant: g, Source: i})
		})
		if err != nil {
			return fmt.Errorf("lockbench: shard %d (%s): %w", s.meta.Shard.Index, s.dir, err)
		}
	}
	k := exclusion.NewChecker(time.Time{}, 0, result.LockName)
	order := k.Check(gs, bound)
	acc.AddCheckedAcross(k.Found(), len(gs), order)
	return nil
}
