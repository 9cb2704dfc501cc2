package plan

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/result"
)

// cellRounds is a cell being measured in rounds: the rounds joined so
// far, when the first began, and the GOMAXPROCS its first round's trial
// chose, which every later round keeps so that the rounds do not add a
// spread of their own.
type cellRounds struct {
	join  *engine.Rounds
	start time.Time
	procs int
}

// runRound runs one round of a cell measured in rounds (--repeat on a
// scenario that does not merge repeats itself) and, after its last — or
// a round that failed — keeps the rounds joined, with their per-round
// figures and intervals.
func (m *matrix) runRound(ctx context.Context, spec CellSpec, c plannedCell) error {
	cr := m.rounds[c.canon]
	if cr == nil {
		cr = &cellRounds{join: engine.NewRounds(result.Cell{})}
		m.rounds[c.canon] = cr
	}
	spec = cr.join.Spec(spec)
	if m.procsTrial != nil && spec.Scenario.Kind() == result.KindClosed {
		if cr.procs == 0 {
			spec.ProcsTrial = m.procsTrial
		} else {
			runtime.GOMAXPROCS(cr.procs)
		}
		// Go's choice again, and its updates as the quota changes.
		defer runtime.SetDefaultGOMAXPROCS()
	}
	res, err := engine.RunCellDetail(ctx, spec)
	if errors.Is(err, ErrNotApplicable) {
		delete(m.rounds, c.canon)
		if c.round == 0 {
			m.skipped = append(m.skipped, strings.TrimPrefix(err.Error(), ErrNotApplicable.Error()+": "))
			if m.plan.OnSkip != nil {
				m.plan.OnSkip(spec, err)
			}
		}
		return nil
	}
	if res.Impl != "" {
		if len(cr.join.Each()) == 0 {
			cr.start = res.Start
			if g := res.Generator; g != nil && len(spec.ProcsTrial) > 0 {
				cr.procs = g.Procs
			}
		}
		cr.join.Add(res.Cell)
	}
	if err == nil && c.round < c.rounds-1 {
		return nil
	}
	delete(m.rounds, c.canon)
	if len(cr.join.Each()) == 0 {
		return err
	}
	if kerr := m.keep(Result{Cell: cr.join.Cell(), Start: cr.start}, c.canon); kerr != nil {
		return kerr
	}
	return err
}

// checkRounds refuses rounds where they cannot run yet: a ramp's
// staircase and a shard's slice of a cell are each one measurement.
func (p *Plan) checkRounds() error {
	if p.Cell.Repeat <= 1 {
		return nil
	}
	for _, s := range p.scenarios {
		switch {
		case engine.MergesRepeats(s):
		case p.Shard != nil:
			return fmt.Errorf("%w: --repeat %d cannot run sharded: run the shards again instead", ErrUsage, p.Cell.Repeat)
		case p.Ramp != nil:
			return fmt.Errorf("%w: --repeat %d does not apply to --ramp yet: run the ramp again instead", ErrUsage, p.Cell.Repeat)
		}
	}
	return nil
}
