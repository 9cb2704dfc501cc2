package plan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/rendezvous"
	"github.com/lockbench/lockbench/result"
)

// Sharding is a plan's part in a run split over processes or machines:
// shard Index of Count runs a slice of every cell's clients with their
// global ids, against servers given by address (never a sandbox), lined
// up with the other shards through those servers (package rendezvous). Each
// shard writes a results directory; Merge joins them.
type Sharding struct {
	Index, Count int
	// StartAt, if set, is the first cell's start on every shard's clock;
	// otherwise shard 0 publishes each cell's start.
	StartAt time.Time
	// Wait bounds each meeting of the shards. Default rendezvous.DefaultWait.
	Wait time.Duration
	// RunID names the run on the servers; shards of one run share it.
	// Default: from the plan's hash.
	RunID string
}

// startAtSlack is how far in the past a --start-at may lie: a start
// computed a moment before launching the shards, not one that has gone —
// shard 0 would then measure alone until the others gave up waiting.
const startAtSlack = 5 * time.Second

// checkSharding refuses a sharded plan that cannot run: a sandbox (each
// shard would have servers of its own), a ramp, a scenario that does not
// split, fewer clients than shards.
func (p *Plan) checkSharding() error {
	s := p.Shard
	if s == nil {
		return nil
	}
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("%w: --shard %d/%d: want i/N with 0 ≤ i < N", engine.ErrUsage, s.Index, s.Count)
	}
	var missing []string
	for _, n := range p.needs() {
		if len(p.Cell.Config.Servers[n.Role]) == 0 {
			missing = append(missing, "--"+n.Role)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: a sharded run uses external servers only (every shard must meet the same ones): give %s", engine.ErrUsage, strings.Join(missing, ", "))
	}
	if p.Ramp != nil {
		return fmt.Errorf("%w: --ramp cannot run sharded", engine.ErrUsage)
	}
	if s.Wait < 0 {
		return fmt.Errorf("%w: --shard-wait must be a positive duration, got %v", engine.ErrUsage, s.Wait)
	}
	if !s.StartAt.IsZero() && time.Until(s.StartAt) < -startAtSlack {
		return fmt.Errorf("%w: --start-at %s is %v in the past: give a time every shard can still meet",
			engine.ErrUsage, s.StartAt.Format(time.RFC3339), -time.Until(s.StartAt).Round(time.Second))
	}
	for _, s := range p.scenarios {
		if !engine.Shardable(s) {
			return fmt.Errorf("%w: scenario %s cannot run sharded (hot, keys and burst can)", engine.ErrUsage, s.Name())
		}
	}
	for _, n := range p.Clients {
		if n < s.Count {
			return fmt.Errorf("%w: --clients %d cannot be split over %d shards: each client count must be ≥ the number of shards", engine.ErrUsage, n, s.Count)
		}
	}
	return nil
}

// PlanHash identifies what the plan runs — implementations, scenarios,
// clients and every setting — but not where, when, with which seed or
// which lockbench: shards of one run share it.
func (p Plan) PlanHash() string {
	m := p.meta(time.Time{}, &provisioned{})
	m.Version, m.GoVersion, m.Host, m.Seed, m.Libraries = "", "", nil, 0, nil
	b, _ := json.Marshal(m)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// sharder is a sharded run's connection to the other shards.
type sharder struct {
	boards []rendezvous.Board
	coord  *rendezvous.Coordinator
	runID  string

	mu     sync.Mutex
	out    string
	grants map[string]*result.GrantWriter
	errs   map[string]error
}

// startSharding meets the servers' board and estimates the clock skew.
func startSharding(ctx context.Context, p Plan) (*sharder, error) {
	s := p.Shard
	runID := s.RunID
	if runID == "" {
		runID = "plan-" + p.PlanHash()
	}
	bs, err := rendezvous.OpenBoards(ctx, impl.Roles(), p.Cell.Config.Servers, runID)
	if err != nil {
		return nil, err
	}
	sh := &sharder{boards: bs, runID: runID, out: p.Out,
		grants: map[string]*result.GrantWriter{}, errs: map[string]error{}}
	sh.coord, err = rendezvous.New(ctx, bs, rendezvous.Options{Index: s.Index, Count: s.Count, PlanHash: p.PlanHash(), Wait: s.Wait, StartAt: s.StartAt})
	if err != nil {
		sh.close()
		return nil, err
	}
	return sh, nil
}

func (s *sharder) close() {
	for _, b := range s.boards {
		b.Close()
	}
}

// meta is what meta.json says of this shard.
func (s *sharder) meta(p Plan) *result.ShardMeta {
	sk := s.coord.Skew()
	return &result.ShardMeta{Index: p.Shard.Index, Count: p.Shard.Count, RunID: s.runID, Skew: &sk}
}

// engineShard is the cells' Shard.
func (s *sharder) engineShard(p Plan) *engine.Shard {
	sh := &engine.Shard{Index: p.Shard.Index, Count: p.Shard.Count, Coord: s.coord}
	if s.out != "" {
		sh.Grants = s.write
	}
	return sh
}

// write appends grants to their cell's file, creating it the first time.
func (s *sharder) write(c result.Cell, gs []result.Grant) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := c.Key()
	if s.errs[key] != nil {
		return
	}
	w := s.grants[key]
	if w == nil {
		var err error
		if w, err = result.CreateGrants(s.out, c); err != nil {
			s.errs[key] = err
			return
		}
		s.grants[key] = w
	}
	if err := w.Write(gs); err != nil {
		s.errs[key] = err
	}
}

// finish closes a cell's grants file (an empty one if it granted
// nothing) and reports the first error writing it.
func (s *sharder) finish(c result.Cell) error {
	s.write(c, nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	key := c.Key()
	w, err := s.grants[key], s.errs[key]
	delete(s.grants, key)
	delete(s.errs, key)
	if w != nil {
		err = errors.Join(err, w.Close())
	}
	if err != nil {
		return fmt.Errorf("lockbench: %s: the grants could not be written: %w", key, err)
	}
	return nil
}
