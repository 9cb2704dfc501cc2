package plan

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// Plan is a matrix of cells: every implementation × scenario × client
// count, run one cell at a time, the implementations interleaved
// (RunOrder).
type Plan struct {
	Impls     []string
	Scenarios []string
	Clients   []int
	// Cell is the template for every cell (locks, duration, hold, config…);
	// its Impl, Scenario and Clients are set per cell. Its ServerKinds
	// defaults to the sandbox's (sandbox.Meter): a plan's cells report
	// the servers' own counters whether the CLI runs it or a program of
	// its own.
	Cell engine.CellSpec
	// Sizes are the sizes of sandboxed ensembles by server kind (a
	// ZooKeeper of 3, say). Default 1.
	Sizes map[string]int
	// Ramp, if set, replaces the client counts: each implementation ×
	// scenario runs a staircase up to the largest of Clients.
	Ramp *engine.Ramp
	// SLO, like "p99<=5ms,errors<=0.1%" (result.ParseSLO), is a set of
	// thresholds every load cell must meet: summary.json lists the cells
	// that did not (slo_breaches), and it and the report name the largest
	// client count per implementation that met it.
	SLO string
	// Out is the results directory; empty writes nothing.
	Out string
	// Shard, if set, runs this process's part of a sharded run.
	Shard *Sharding
	// Guard, if set, says whether cells guard a register (CellSpec.Guard).
	// Nil: the fault scenarios do, the load scenarios do not.
	Guard *bool
	// Profile is how the sandbox configures the servers it starts
	// (sandbox.ProfileProduction when empty).
	Profile sandbox.Profile
	// ServerWarmup bounds the warm-up each server kind gets before the
	// first measured cell, in the production profile (see warmServers);
	// 0 skips it.
	ServerWarmup time.Duration

	// Optional observers, called from Run's goroutine except Progress.
	OnServers  func(s impl.Servers, sandboxed []string)
	OnCell     func(index, total int, spec engine.CellSpec)
	OnProgress func(index, total int, spec engine.CellSpec, p engine.Progress)
	OnResult   func(c result.Cell)
	// OnSkip hears of cells skipped because their scenario does not apply
	// to their implementation.
	OnSkip func(spec engine.CellSpec, err error)
	// OnRunID hears the run's ID (shared by a sharded run's shards) before
	// the first cell.
	OnRunID func(id string)
	// OnInterval hears each second of a load cell as it closes, on one
	// goroutine of the cell's, after its .hlog line is written; the
	// histograms are reused once it returns.
	OnInterval func(c result.Cell, start time.Time, iv hlog.Interval)

	// drivers and scenarios are Impls and Scenarios resolved by Validate,
	// carried from then on.
	drivers   []impl.Driver
	scenarios []engine.Scenario
}

// Run runs the plan. Servers not given in Plan.Cell.Config.Servers are
// started in a sandbox for the length of the run. summary.json is rewritten
// after every cell, so results of completed cells survive a later failure
// or an interrupt; the summary returned holds them too.
func Run(ctx context.Context, plan Plan) (*result.Summary, error) {
	sum := &result.Summary{Schema: result.SchemaVersion, Version: Version, Started: time.Now().UTC()}
	if !plan.validated() {
		if err := plan.Validate(); err != nil {
			return sum, err
		}
	}
	if plan.SLO != "" {
		sum.SLO = plan.SLO // Validate parsed it
	}
	if plan.Profile == "" {
		plan.Profile = sandbox.DefaultProfile
	}
	// Faults that start servers of their own mid-run start them as the
	// run's: the profile travels with every cell's context.
	ctx = sandbox.WithProfile(ctx, plan.Profile)
	fleet, err := provision(ctx, plan)
	if err != nil {
		return sum, err
	}
	defer fleet.close()
	// A ramp's stairs and a shard's slice of a cell are parts of one
	// measurement: they keep Go's GOMAXPROCS rather than each choosing.
	var trial []int
	var open int
	var trialWhy, openWhy string
	if plan.Ramp == nil && plan.Shard == nil {
		trial, trialWhy = procsTrial(fleet.local())
		open, openWhy = openProcs(fleet.local())
		fleet.procsWhy = strings.Join(slices.DeleteFunc([]string{trialWhy, openWhy}, func(s string) bool { return s == "" }), "; ")
	}
	plan.Cell.Config.Servers = fleet.servers
	if plan.OnServers != nil {
		plan.OnServers(fleet.servers, fleet.sandboxed)
	}
	m := &matrix{plan: plan, sum: sum, runID: randomID(), procsTrial: trial, openProcs: open, openWhy: openWhy,
		logs: map[string]*hlog.Writer{}, logErr: map[string]error{}, rounds: map[int]*cellRounds{}, stairs: map[int]map[int]*cellRounds{}}
	if plan.Shard != nil {
		if m.shard, err = startSharding(ctx, plan); err != nil {
			return sum, err
		}
		defer m.shard.close()
		m.runID = m.shard.runID
		m.plan.Cell.Shard = m.shard.engineShard(plan)
	}
	if plan.OnRunID != nil {
		plan.OnRunID(m.runID)
	}
	fleet.disk = fleet.measureDisk()
	if plan.Shard == nil {
		fleet.warmups = warmServers(ctx, m.plan, m.runID, fleet.sandboxed)
	}
	if plan.Out != "" {
		if err := plan.writeMeta(ctx, sum.Started, fleet, m.shard); err != nil {
			return sum, err
		}
	}
	err = m.run(ctx)
	if dead := fleet.dead(); len(dead) > 0 {
		err = errors.Join(err, fmt.Errorf("lockbench: sandboxed server died during the run: %s", strings.Join(dead, ", ")))
	}
	if err != nil {
		m.fail(err)
	}
	return sum, err
}

// fail notes in summary.json why the run ended: the cells already written
// stay, and the file says what became of the rest.
func (m *matrix) fail(err error) {
	m.sum.Failure = err.Error()
	if m.plan.Out != "" && len(m.sum.Cells) > 0 {
		result.WriteJSON(filepath.Join(m.plan.Out, result.SummaryFile), m.sum)
	}
}

// matrix is a plan being run.
type matrix struct {
	plan Plan
	// procsTrial is the GOMAXPROCS its closed-loop cells try as they warm
	// up, nil when Go's stands (procsTrial).
	procsTrial []int
	// openProcs is the GOMAXPROCS its open-loop cells run under, 0 when
	// Go's stands (openProcs).
	openProcs int
	openWhy   string
	sum       *result.Summary
	runID     string
	index     int
	// canon holds the canonical place of each cell of sum.Cells, which
	// it keeps in that order.
	canon   []int
	skipped []string
	// logs are the open .hlog of the cells running, by cell key: each
	// interval is written as it closes (see onInterval); logErr keeps why
	// one could not be created, for keep to report.
	logs   map[string]*hlog.Writer
	logErr map[string]error
	// shard is set in a sharded run.
	shard *sharder
	// rounds are the cells being measured in rounds (--repeat), by
	// canonical place, until their last round has run.
	rounds map[int]*cellRounds
	// stairs are a ramp's stairs being measured in rounds, by canonical
	// place and client count.
	stairs map[int]map[int]*cellRounds
}

// validated reports whether Validate has resolved the plan's names: a
// plan the caller validated is not judged twice.
func (p Plan) validated() bool {
	return len(p.drivers) > 0 && len(p.drivers) == len(p.Impls) && len(p.scenarios) == len(p.Scenarios)
}

// RunOrder is how a plan's cells run, as meta.json records it: for each
// scenario and client count, every implementation back to back, their
// order reversed from one such group to the next (A B, B A, A B …). Side
// by side, the two sides then meet the same servers — a JVM warming up, a
// log growing, the machine drifting — instead of the first implementation
// always meeting the coldest servers and the drift falling on one side.
const RunOrder = "interleaved (ABBA by scenario and client count)"

// plannedCell is a cell of the plan with its place in the canonical order
// (implementation, then scenario, then client count), which the summary
// keeps whatever order the cells ran in.
type plannedCell struct {
	spec  engine.CellSpec
	canon int
	// round is which of the cell's rounds (--repeat) this is, of rounds:
	// a scenario that does not merge repeats itself runs each round as a
	// cell of its own, joined once the last has run.
	round, rounds int
}

// cells lists the plan's cells in run order (RunOrder). A fault script
// has its own cast — a holder and waiters — and repeats; sweeping client
// counts would only multiply its minutes, so it runs once, with the first
// count (≥ 2). A ramp runs one staircase per implementation and scenario,
// up to the largest count. The list depends on the plan alone, so every
// shard of a sharded run runs the same cells in the same order.
func (p Plan) cells() []plannedCell {
	counts := func(s engine.Scenario) []int {
		switch {
		case s.Kind() == result.KindFault:
			return []int{max(p.Clients[0], 2)}
		case p.Ramp != nil:
			return []int{slices.Max(p.Clients)}
		}
		return p.Clients
	}
	// An implementation's cells are a block of the canonical order; a
	// scenario's begin at first[j] within it.
	first, block := make([]int, len(p.scenarios)), 0
	for j, s := range p.scenarios {
		first[j] = block
		block += len(counts(s))
	}
	var out []plannedCell
	group := 0
	for j, s := range p.scenarios {
		rounds := 1
		if p.Cell.Repeat > 1 && !engine.MergesRepeats(s) {
			rounds = p.Cell.Repeat
		}
		for k, n := range counts(s) {
			// Each round of one implementation has a round of every other
			// beside it in time, the order reversed from one round to the
			// next as from one group to the next.
			for round := range rounds {
				for r := range p.drivers {
					i := r
					if (group+round)%2 == 1 {
						i = len(p.drivers) - 1 - r
					}
					spec := p.Cell
					d := p.drivers[i]
					spec.Impl, spec.Driver, spec.Scenario, spec.Clients = d.Name, d, s, n
					spec.Guard = p.guards(s)
					if rounds > 1 {
						spec.Repeat = 1
					}
					out = append(out, plannedCell{spec: spec, canon: i*block + first[j] + k, round: round, rounds: rounds})
				}
			}
			group++
		}
	}
	return out
}

// guards says whether s's cells guard a register: as Guard says, or by
// default in the fault scenarios alone.
func (p Plan) guards(s engine.Scenario) bool {
	if p.Guard != nil {
		return *p.Guard
	}
	return s.Kind() == result.KindFault
}

func (m *matrix) run(ctx context.Context) error {
	cells := m.plan.cells()
	for _, c := range cells {
		spec := c.spec
		spec.Config.Namespace = fmt.Sprintf("%s-%d", m.runID, m.index)
		idx := m.index
		if m.plan.OnProgress != nil {
			spec.Progress = func(p engine.Progress) { m.plan.OnProgress(idx, len(cells), spec, p) }
		}
		if m.plan.OnCell != nil {
			m.plan.OnCell(idx, len(cells), spec)
		}
		spec.OnInterval = m.onInterval
		m.index++
		run := m.runCell
		if c.rounds > 1 {
			run = func(ctx context.Context, spec engine.CellSpec, canon int) error { return m.runRound(ctx, spec, c) }
		}
		if err := run(ctx, spec, c.canon); err != nil {
			return err
		}
	}
	if len(m.sum.Cells) == 0 && len(m.skipped) > 0 {
		return fmt.Errorf("%w: no cell applies: %s", engine.ErrUsage, m.skipped[0])
	}
	return nil
}

// runCell runs one cell (or a ramp's stairs) and keeps what it measured,
// even when it then failed, at its canonical place canon.
func (m *matrix) runCell(ctx context.Context, spec engine.CellSpec, canon int) error {
	if m.procsTrial != nil && spec.Scenario.Kind() == result.KindClosed {
		spec.ProcsTrial = m.procsTrial
		// Go's choice again, and its updates as the quota changes.
		defer runtime.SetDefaultGOMAXPROCS()
	}
	defer m.setOpenProcs(&spec)()
	if m.plan.Ramp != nil {
		stairs, err := engine.RunRamp(ctx, spec, *m.plan.Ramp)
		for _, res := range stairs {
			if kerr := m.keep(res, canon); kerr != nil {
				return kerr
			}
		}
		return err
	}
	res, err := engine.RunCellDetail(ctx, spec)
	if errors.Is(err, engine.ErrNotApplicable) {
		m.skipped = append(m.skipped, strings.TrimPrefix(err.Error(), engine.ErrNotApplicable.Error()+": "))
		if m.plan.OnSkip != nil {
			m.plan.OnSkip(spec, err)
		}
		return nil
	}
	if err != nil && res.Impl == "" {
		return err
	}
	if kerr := m.keep(res, canon); kerr != nil {
		return kerr
	}
	return err
}

// setOpenProcs sets an open-loop cell's GOMAXPROCS (matrix.openProcs)
// and returns what sets Go's choice back.
func (m *matrix) setOpenProcs(spec *engine.CellSpec) (restore func()) {
	if m.openProcs == 0 || spec.Scenario.Kind() != result.KindOpen {
		return func() {}
	}
	runtime.GOMAXPROCS(m.openProcs)
	spec.ProcsWhy = m.openWhy
	// Go's choice again, and its updates as the quota changes.
	return runtime.SetDefaultGOMAXPROCS
}

// onInterval writes a cell's interval to its .hlog as it closes; without
// a results directory it is dropped, so that no run's memory grows with
// its length. Errors are kept for keep to report: the log, once it could
// not be created, is not tried again (a second try would truncate it).
func (m *matrix) onInterval(c result.Cell, start time.Time, iv hlog.Interval) {
	if m.plan.OnInterval != nil {
		defer m.plan.OnInterval(c, start, iv)
	}
	key := c.Key()
	if m.plan.Out == "" || m.logErr[key] != nil {
		return
	}
	l := m.logs[key]
	if l == nil {
		var err error
		if l, err = hlog.Create(m.plan.Out, c, "lockbench "+Version); err != nil {
			m.logErr[key] = err
			return
		}
		m.logs[key] = l
	}
	l.Write(start, iv)
}

// closeLog finishes a cell's .hlog: the one written while it ran or, for
// a cell whose intervals came with its result (a fault scenario's), one
// written now.
func (m *matrix) closeLog(res engine.Result) error {
	key := res.Key()
	l, err := m.logs[key], m.logErr[key]
	delete(m.logs, key)
	delete(m.logErr, key)
	switch {
	case err != nil:
		return fmt.Errorf("lockbench: %s: the interval log could not be written: %w", key, err)
	case l == nil:
		return hlog.WriteCell(m.plan.Out, res.Cell, res.Start, res.Intervals, "lockbench "+Version)
	}
	return l.Close(res.Start)
}

// keep adds a cell's result to the summary and writes it out at once. A
// cell enters summary.json only once its interval log (and grants) are
// whole on disk; when they or the summary cannot be written, its row is
// still shown (OnResult), and the error says what was kept. The cell
// goes to its canonical place canon, after any there before it (a ramp's
// earlier stairs), so that the summary of a run cut short is in the
// order asked too.
func (m *matrix) keep(res engine.Result, canon int) error {
	res.Cell.Derive()
	if m.plan.OnResult != nil {
		defer m.plan.OnResult(res.Cell)
	}
	if m.plan.Out != "" {
		if err := m.closeLog(res); err != nil {
			return m.writeErr(res.Cell, err)
		}
		if err := m.writeHistory(&res.Cell); err != nil {
			return m.writeErr(res.Cell, err)
		}
		if m.shard != nil {
			if err := m.shard.finish(res.Cell); err != nil {
				return m.writeErr(res.Cell, err)
			}
		}
	}
	at := len(m.canon)
	for at > 0 && m.canon[at-1] > canon {
		at--
	}
	m.sum.Cells = slices.Insert(m.sum.Cells, at, res.Cell)
	m.canon = slices.Insert(m.canon, at, canon)
	m.judge()
	if m.plan.Out != "" {
		if err := result.WriteJSON(filepath.Join(m.plan.Out, result.SummaryFile), m.sum); err != nil {
			// The cell is dropped, and with it what it added to the
			// judgement: summary.json, rewritten with the failure, must
			// not count a breach or a capacity of a cell it lacks.
			m.sum.Cells = slices.Delete(m.sum.Cells, at, at+1)
			m.canon = slices.Delete(m.canon, at, at+1)
			m.judge()
			return m.writeErr(res.Cell, err)
		}
	}
	return nil
}

// judge sets the summary's SLO figures (capacity, breaches, met) from the
// cells it holds. A shard records the SLO but does not judge it: its cells
// are slices whose latency and throughput are not the cell's. Merge judges.
func (m *matrix) judge() {
	if m.plan.SLO == "" || m.shard != nil {
		return
	}
	slo, _ := result.ParseSLO(m.plan.SLO)
	JudgeSLO(m.sum, slo)
}

// JudgeSLO sets sum's SLO figures against slo — capacity, breaches (in
// words as well, for those who read summary.json without lockbench) and
// whether it was met — as a run, a merge and a re-render all do.
func JudgeSLO(sum *result.Summary, slo result.SLO) {
	judge.SLO(sum, slo)
	report.WordBreaches(sum.SLOBreaches)
}

// writeErr is the error for cell c's files that could not be written: on
// a full disk, one line saying so, what summary.json still holds and how
// to render it once there is room.
func (m *matrix) writeErr(c result.Cell, err error) error {
	if !errors.Is(err, syscall.ENOSPC) {
		return err
	}
	return fmt.Errorf("lockbench: --out %s is out of disk space: %s was measured but could not be written (%w); summary.json keeps the %d cells finished before it: free space, then `lockbench report %s`",
		m.plan.Out, c.Key(), syscall.ENOSPC, len(m.sum.Cells), m.plan.Out)
}

// writeMeta writes DIR/meta.json before the first cell.
func (p Plan) writeMeta(ctx context.Context, started time.Time, f *provisioned, s *sharder) error {
	if err := os.MkdirAll(p.Out, 0o755); err != nil {
		return fmt.Errorf("lockbench: %w", err)
	}
	meta := p.meta(started, f)
	meta.ServerVersions = f.versions(ctx)
	meta.PlanHash = p.PlanHash()
	if s != nil {
		meta.Shard = s.meta(p)
	}
	return result.WriteJSON(filepath.Join(p.Out, result.MetaFile), meta)
}

func randomID() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
