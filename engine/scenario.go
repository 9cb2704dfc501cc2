package engine

import (
	"github.com/HdrHistogram/hdrhistogram-go"

	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// Scenario is a load shape: how a cell's clients are driven. Each kind
// lives in a file of its own (hot.go, keys.go, burst.go, rate.go, and the
// fault scenarios of package faults through fault.go); the cell runner and
// the plan know none of them by name.
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

// shape is what a load scenario adds to the shared cell runner (load.go):
// what each client does, what the runner does meanwhile, and what the
// scenario adds to the cell's result. A shape is made for one cell and
// holds that cell's scenario state (a burst's grants, the open loop's
// schedule); the runner holds only what every scenario shares.
type shape interface {
	// prepare adjusts a run before any client starts.
	prepare(r *cellRun)
	// client is one client's part, on a goroutine of its own.
	client(ctx context.Context, r *cellRun, w *worker)
	// drive runs on the runner's goroutine once the clients started; it
	// returns when the scenario's own load is over (nothing to do for a
	// closed loop, whose clients stop at the deadline).
	drive(ctx context.Context, r *cellRun)
	// finish adds the scenario's own figures to the cell.
	finish(r *cellRun, c *result.Cell, totals [nTags]*hdrhistogram.Histogram)
}

// servingShape is a shape whose clients outlive the cell's deadline to
// serve what was let in before it (the open loop): its clients run under
// the context serveContext derives from the cell's parent context.
type servingShape interface {
	serveContext(parent context.Context, r *cellRun) (context.Context, context.CancelFunc)
}

// loadScenario is the part every load scenario shares: its name, words and
// kind, and running through the shared cell runner.
type loadScenario struct {
	name, description string
	kind              result.Kind
	// newShape makes the scenario's shape for one cell: its state is the
	// cell's own, never shared with another cell.
	newShape func() shape
	// minClients is the fewest clients the scenario means anything with.
	minClients int
	// noTimeout, if set, says why --acquire-timeout cannot apply: the
	// scenario counts on nobody giving up, or gives up on its own schedule.
	noTimeout string
}

func (s loadScenario) Name() string           { return s.name }
func (s loadScenario) Description() string    { return s.description }
func (s loadScenario) Kind() result.Kind      { return s.kind }
func (s loadScenario) Options() []impl.Option { return nil }

// Check wants exactly one of a duration and a count of acquisitions (a
// burst sets its own), the scenario's fewest clients, and no acquire
// timeout where the scenario cannot have one.
func (s loadScenario) Check(spec *CellSpec) error {
	switch {
	case s.kind != result.KindBurst && (spec.Duration > 0) == (spec.Acquires > 0):
		return fmt.Errorf("%w: give exactly one of duration and acquires", ErrUsage)
	case spec.Clients < s.minClients:
		return fmt.Errorf("%w: scenario %s needs at least %d clients, got --clients %d", ErrUsage, s.name, s.minClients, spec.Clients)
	case spec.AcquireTimeout > 0 && s.noTimeout != "":
		return fmt.Errorf("%w: --acquire-timeout %v cannot apply to scenario %s: %s", ErrUsage, spec.AcquireTimeout, s.name, s.noTimeout)
	}
	return nil
}

func (s loadScenario) loadShape() shape { return s.newShape() }

func (s loadScenario) Run(ctx context.Context, spec CellSpec) (Result, error) {
	return runLoad(ctx, spec, s.newShape())
}
