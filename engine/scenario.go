package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// Scenario is how a cell's clients are driven: a load shape of package
// scenarios (through Load) or a fault scenario of package faults (through
// RegisterFault); the cell runner and the plan know none of them by name.
type Scenario interface {
	Name() string
	Description() string
	Kind() result.Kind
	// Options are the scenario's own settings, each a flag of `lockbench
	// run`, read from impl.Config.Options.
	Options() []impl.Option
	// Check validates spec for this scenario and fills in what the
	// scenario defaults; it touches no server.
	Check(spec *CellSpec) error
	// Run runs one checked cell.
	Run(ctx context.Context, spec CellSpec) (Result, error)
}

var (
	scenarioMu sync.RWMutex
	registered = map[string]Scenario{}
)

// RegisterScenario makes a scenario selectable by its name. It panics on a
// duplicate name: a programming error.
func RegisterScenario(s Scenario) {
	scenarioMu.Lock()
	defer scenarioMu.Unlock()
	if _, dup := registered[s.Name()]; dup || s.Name() == "" {
		panic(fmt.Sprintf("engine: RegisterScenario(%q) twice or without a name", s.Name()))
	}
	registered[s.Name()] = s
}

// LookupScenario returns the scenario registered under name.
func LookupScenario(name string) (Scenario, bool) {
	scenarioMu.RLock()
	defer scenarioMu.RUnlock()
	s, ok := registered[name]
	return s, ok
}

// Scenarios returns every registered scenario, sorted by name.
func Scenarios() []Scenario {
	scenarioMu.RLock()
	defer scenarioMu.RUnlock()
	out := make([]Scenario, 0, len(registered))
	for _, s := range registered {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Scenario) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// ScenarioNames returns every registered scenario's name, sorted.
func ScenarioNames() []string {
	var out []string
	for _, s := range Scenarios() {
		out = append(out, s.Name())
	}
	return out
}

// ScenarioOptions returns every option the registered scenarios declare,
// each once, sorted by name.
func ScenarioOptions() []impl.Option {
	by := map[string]impl.Option{}
	for _, s := range Scenarios() {
		for _, o := range s.Options() {
			by[o.Name] = o
		}
	}
	out := make([]impl.Option, 0, len(by))
	for _, o := range by {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b impl.Option) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Shape is what a load scenario adds to the shared cell runner
// (cellrun.go): what each client does, what the runner does meanwhile, and
// what the scenario adds to the cell's result. A shape is made for one
// cell and holds that cell's scenario state (a burst's grants, the open
// loop's schedule); the runner holds only what every scenario shares.
type Shape interface {
	// Prepare adjusts a cell before any client starts.
	Prepare(c *Cell)
	// Client is one client's part, on a goroutine of its own.
	Client(ctx context.Context, c *Cell, w *Client)
	// Drive runs on the runner's goroutine once the clients started; it
	// returns when the scenario's own load is over (nothing to do for a
	// closed loop, whose clients stop at the deadline).
	Drive(ctx context.Context, c *Cell)
	// Finish adds the scenario's own figures to the cell's result.
	Finish(c *Cell, into *result.Cell, totals Totals)
}

// Serving is a shape whose clients outlive the cell's deadline to
// serve what was let in before it (the open loop): its clients run under
// the context ServeContext derives from the cell's parent context.
type Serving interface {
	ServeContext(parent context.Context, c *Cell) (context.Context, context.CancelFunc)
}

// LoadSpec declares a load scenario: its name, words and kind, and the
// shape it runs through the shared cell runner.
type LoadSpec struct {
	Name, Description string
	Kind              result.Kind
	// NewShape makes the scenario's shape for one cell: its state is the
	// cell's own, never shared with another cell.
	NewShape func() Shape
	// MinClients is the fewest clients the scenario means anything with.
	MinClients int
	// NoTimeout, if set, says why --acquire-timeout cannot apply: the
	// scenario counts on nobody giving up, or gives up on its own schedule.
	NoTimeout string
	// Shardable says the scenario can run split over shards: its shards
	// need to agree only on when to start and, in a queue, when to hand on.
	Shardable bool
	// Check, if set, checks and completes the scenario's own settings
	// before the checks every load scenario shares.
	Check func(spec *CellSpec) error
	// Repeatable: CellSpec.Repeat > 1 runs the scenario that many times,
	// each on connections of its own, as one cell (RunRepeats) — a burst
	// buying precision at a small n. Finish then merges what the shape
	// added to each repeat's cell.
	Repeatable bool
	// Merge, if set, adds to a repeated cell what the scenario's shape
	// added to each repeat's cell (a burst's theory, its barrier's
	// outcome).
	Merge func(into *result.Cell, repeats []result.Cell)
	// WarmupRun says the scenario's warm-up is one whole run of its shape,
	// discarded, rather than time before measuring: a burst acquires once
	// a client, so a JVM's server meets the burst's code path cold in the
	// first one, and its compile would be counted against the hand-offs.
	// CellSpec.Warmup > 0 asks for it.
	WarmupRun bool
	// ServerIdle says the cell's figures are read above the servers' CPU
	// at rest, read just before the cell (as a burst's are).
	ServerIdle bool
}

// readsIdle says the scenario's cells read the servers' CPU at rest
// first.
func readsIdle(s Scenario) bool {
	if l, ok := s.(loadScenario); ok && l.s.ServerIdle {
		return true
	}
	return s.Kind() == result.KindBurst
}

// Load makes the scenario s declares; RegisterScenario makes it
// selectable.
func Load(s LoadSpec) Scenario { return loadScenario{s} }

// loadScenario is a declared load scenario, run through the shared cell
// runner.
type loadScenario struct{ s LoadSpec }

func (s loadScenario) Name() string           { return s.s.Name }
func (s loadScenario) Description() string    { return s.s.Description }
func (s loadScenario) Kind() result.Kind      { return s.s.Kind }
func (s loadScenario) Options() []impl.Option { return nil }

// Check wants exactly one of a duration and a count of acquisitions (a
// burst sets its own), the scenario's fewest clients, and no acquire
// timeout where the scenario cannot have one.
func (s loadScenario) Check(spec *CellSpec) error {
	d := s.s
	if d.Check != nil {
		if err := d.Check(spec); err != nil {
			return err
		}
	}
	switch {
	case spec.Repeat > 1 && !d.Repeatable:
		return fmt.Errorf("%w: --repeat %d does not apply to scenario %s (it does to burst and the fault scenarios)", ErrUsage, spec.Repeat, d.Name)
	case d.Kind != result.KindBurst && (spec.Duration > 0) == (spec.Acquires > 0):
		return fmt.Errorf("%w: give exactly one of duration and acquires", ErrUsage)
	case spec.Clients < d.MinClients:
		return fmt.Errorf("%w: scenario %s needs at least %d clients, got --clients %d", ErrUsage, d.Name, d.MinClients, spec.Clients)
	case spec.AcquireTimeout > 0 && d.NoTimeout != "":
		return fmt.Errorf("%w: --acquire-timeout %v cannot apply to scenario %s: %s", ErrUsage, spec.AcquireTimeout, d.Name, d.NoTimeout)
	}
	return nil
}

// NewShape makes the scenario's shape for one cell.
func (s loadScenario) NewShape() Shape { return s.s.NewShape() }

func (s loadScenario) Run(ctx context.Context, spec CellSpec) (Result, error) {
	// A sharded cell's shards would all have to meet for a warm-up run
	// too; its bursts run cold, as they did.
	if s.s.WarmupRun && spec.Warmup > 0 && spec.Shard == nil {
		if err := s.warmUp(ctx, spec); err != nil {
			return Result{}, err
		}
		spec.Warmup = 0 // warm: the repeats run no other
	}
	if s.s.Repeatable && spec.Repeat > 1 {
		return s.runRepeats(ctx, spec)
	}
	return runLoad(ctx, spec, s.s.NewShape())
}

// warmUp runs the scenario once in a namespace of its own and discards
// what it measured: the servers have then run its code path before the
// cell's first measured run.
func (s loadScenario) warmUp(ctx context.Context, spec CellSpec) error {
	w := spec
	w.Repeat = 1
	w.Config.Namespace = spec.Config.Namespace + "-warm"
	// Nothing of it is seen: no interval reaches the cell's .hlog, no
	// progress line, no timer.
	w.OnInterval, w.Progress, w.OnClock = nil, nil, nil
	if _, err := runLoad(ctx, w, s.s.NewShape()); err != nil {
		return fmt.Errorf("warm-up run of %s: %w", s.s.Name, err)
	}
	return nil
}

// runRepeats runs a repeatable scenario spec.Repeat times as one cell:
// each repeat in a namespace of its own, the generator's and the servers'
// CPU times added up, each repeat's server CPU per hand-off kept.
func (s loadScenario) runRepeats(ctx context.Context, spec CellSpec) (Result, error) {
	base := result.Cell{Impl: spec.Impl, Scenario: s.s.Name, Kind: s.s.Kind, Clients: spec.Clients, Locks: spec.Locks, Theory: spec.Driver.Theory}
	ns := spec.Config.Namespace
	start := time.Now()
	cell, repeats, err := RunRepeats(ctx, spec, base, func(r int, rs *CellSpec) (func(), error) {
		rs.Config.Namespace = fmt.Sprintf("%s-r%d", ns, r)
		return func() {}, nil
	})
	cell.Repeats = len(repeats)
	cell.Generator = sumGenerators(repeats)
	for _, c := range repeats {
		if h, ok := result.HandoffCosts(c); ok && h.ServerCPUUs != nil {
			cell.RepeatServerCPUUs = append(cell.RepeatServerCPUUs, *h.ServerCPUUs)
		}
	}
	if s.s.Merge != nil {
		s.s.Merge(&cell, repeats)
	}
	return Result{Cell: cell, Start: start}, err
}

// sumGenerators adds the repeats' CPU times, lockbench's and the
// servers', and their GC; of the rest it keeps the worst (the busiest
// share, the most other work, every warning), and the first repeat's
// wake-up lateness.
func sumGenerators(cells []result.Cell) *result.Generator {
	var g *result.Generator
	var acquires int64
	for _, c := range cells {
		if c.Generator == nil {
			continue
		}
		acquires += c.Acquires
		if g == nil {
			first := *c.Generator
			first.ServerCPUSeconds = maps.Clone(first.ServerCPUSeconds)
			g = &first
			continue
		}
		h := c.Generator
		g.CPUSeconds += h.CPUSeconds
		g.ServerSpanS += h.ServerSpanS
		g.GCPauseMs += h.GCPauseMs
		g.GCCount += h.GCCount
		g.Allocs += h.Allocs
		g.AllocBytes += h.AllocBytes
		g.Goroutines = max(g.Goroutines, h.Goroutines)
		g.CPUShare = max(g.CPUShare, h.CPUShare)
		g.OtherCores = max(g.OtherCores, h.OtherCores)
		if h.Warning != "" && !strings.Contains(g.Warning, h.Warning) {
			g.Warning = strings.TrimPrefix(g.Warning+"; "+h.Warning, "; ")
		}
		for a, v := range h.ServerCPUSeconds {
			if g.ServerCPUSeconds == nil {
				g.ServerCPUSeconds = map[string]float64{}
			}
			g.ServerCPUSeconds[a] += v
		}
	}
	if g != nil {
		g.PerCycle(acquires)
	}
	return g
}
