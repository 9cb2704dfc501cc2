package plan

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
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
func (m *matrix) runRound(ctx context.Context, spec engine.CellSpec, c plannedCell) error {
	if m.plan.Ramp != nil {
		return m.runRampRound(ctx, spec, c)
	}
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
	defer m.setOpenProcs(&spec)()
	res, err := engine.RunCellDetail(ctx, spec)
	if errors.Is(err, engine.ErrNotApplicable) {
		delete(m.rounds, c.canon)
		if c.round == 0 {
			m.skipped = append(m.skipped, strings.TrimPrefix(err.Error(), engine.ErrNotApplicable.Error()+": "))
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
	if kerr := m.keep(engine.Result{Cell: cr.join.Cell(), Start: cr.start}, c.canon); kerr != nil {
		return kerr
	}
	return err
}

// checkRounds refuses rounds where they cannot run: a shard's slice of a
// cell is part of one measurement.
func (p *Plan) checkRounds() error {
	if p.Cell.Repeat <= 1 {
		return nil
	}
	for _, s := range p.scenarios {
		switch {
		case engine.MergesRepeats(s):
		case p.Shard != nil:
			return fmt.Errorf("%w: --repeat %d cannot run sharded: run the shards again instead", engine.ErrUsage, p.Cell.Repeat)
		}
	}
	return nil
}

// runRampRound runs one round of a ramp's staircase and, after the last
// round (or one that failed), keeps each stair joined over the rounds, in
// the order the stairs climbed. Each stair's intervals are routed to its
// own join by its client count.
func (m *matrix) runRampRound(ctx context.Context, spec engine.CellSpec, c plannedCell) error {
	stairs := m.stairs[c.canon]
	if stairs == nil {
		stairs = map[int]*cellRounds{}
		m.stairs[c.canon] = stairs
	}
	stair := func(clients int) *cellRounds {
		if stairs[clients] == nil {
			stairs[clients] = &cellRounds{join: engine.NewRounds(result.Cell{})}
		}
		return stairs[clients]
	}
	next := spec.OnInterval
	spec.Repeat = 1
	spec.OnInterval = func(cell result.Cell, start time.Time, iv hlog.Interval) {
		stair(cell.Clients).join.Interval(cell, start, iv)
		if next != nil {
			next(cell, start, iv)
		}
	}
	res, err := engine.RunRamp(ctx, spec, *m.plan.Ramp)
	for _, st := range res {
		cr := stair(st.Clients)
		if len(cr.join.Each()) == 0 {
			cr.start = st.Start
		}
		cr.join.Add(st.Cell)
	}
	if err == nil && c.round < c.rounds-1 {
		return nil
	}
	delete(m.stairs, c.canon)
	for _, k := range slices.Sorted(maps.Keys(stairs)) {
		cr := stairs[k]
		if len(cr.join.Each()) == 0 {
			continue
		}
		if kerr := m.keep(engine.Result{Cell: cr.join.Cell(), Start: cr.start}, c.canon); kerr != nil {
			return kerr
		}
	}
	return err
}
