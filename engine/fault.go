package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// Fault is a scripted failure — a crash, a pause, a failover — that a
// package of fault scenarios (package faults) registers with
// RegisterFault. It runs its own cast of clients, spec.Repeat times, and
// may start servers of its own when the failure needs control the given
// servers do not offer.
type Fault struct {
	Name, Description string
	// Options are the fault's own settings (a delay to add, say).
	Options []impl.Option
	// Applies says whether the fault can be staged on a driver, from the
	// driver's declared capabilities and needs; an error says why not.
	Applies func(d impl.Driver) error
	// Run runs one cell of the fault for driver d.
	Run func(ctx context.Context, spec CellSpec, d impl.Driver) (result.Cell, error)
}

// ErrNotApplicable is wrapped by the error of a fault cell whose scenario
// does not apply to the implementation (restart needs a quorum of
// masters). Run skips such cells with a note instead of stopping.
var ErrNotApplicable = fmt.Errorf("%w: the scenario does not apply to this implementation", ErrUsage)

// RegisterFault makes a fault scenario selectable by name. Like
// RegisterScenario it panics on a duplicate.
func RegisterFault(f Fault) {
	if f.Run == nil {
		panic(fmt.Sprintf("engine: RegisterFault(%q) without Run", f.Name))
	}
	RegisterScenario(faultScenario{f})
}

// faultScenario is a Fault as a Scenario.
type faultScenario struct{ f Fault }

func (s faultScenario) Name() string           { return s.f.Name }
func (s faultScenario) Description() string    { return s.f.Description }
func (s faultScenario) Kind() result.Kind      { return result.KindFault }
func (s faultScenario) Options() []impl.Option { return s.f.Options }

// Check refuses a driver the fault cannot be staged on.
func (s faultScenario) Check(spec *CellSpec) error {
	d := spec.Driver
	if s.f.Applies != nil {
		if err := s.f.Applies(d); err != nil {
			return fmt.Errorf("%w: scenario %s: %v", ErrNotApplicable, s.f.Name, err)
		}
	}
	return nil
}

func (s faultScenario) Run(ctx context.Context, spec CellSpec) (Result, error) {
	d := spec.Driver
	if spec.Config.Namespace == "" {
		spec.Config.Namespace = fmt.Sprintf("faults-%d", time.Now().UnixNano())
	}
	ctx, cancel := context.WithTimeout(ctx, spec.MaxTime)
	defer cancel()
	start := time.Now()
	cell, err := s.f.Run(ctx, spec, d)
	cell.Kind = result.KindFault
	return Result{Cell: cell, Start: start}, err
}

// FaultsFor names the fault scenarios that can be staged on d, as their
// Applies judges from what d declares, in the order Scenarios lists them.
func FaultsFor(d impl.Driver) []string {
	var out []string
	for _, s := range Scenarios() {
		f, ok := s.(faultScenario)
		if ok && (f.f.Applies == nil || f.f.Applies(d) == nil) {
			out = append(out, f.f.Name)
		}
	}
	return out
}
