package lockbench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/report"
)

// FaultRunner runs one cell of a fault scenario: spec.Impl under the
// scripted failure spec.Scenario, spec.Repeat times. It may start servers
// of its own (a master and its replica, proxies to cut) when the failure
// needs control the given servers do not offer.
type FaultRunner func(ctx context.Context, spec CellSpec) (report.Cell, error)

// ErrNotApplicable is wrapped by a fault runner's error when its scenario
// does not apply to the implementation (restart is Redlock's alone). Run
// skips such cells with a note instead of stopping.
var ErrNotApplicable = fmt.Errorf("%w: the scenario does not apply to this implementation", ErrUsage)

var (
	faultMu      sync.RWMutex
	faultRunners = map[string]FaultRunner{}
)

// RegisterFault makes a fault scenario runnable. Package faults registers
// its runners in init; like impl.Register it panics on a duplicate.
func RegisterFault(scenario string, fn FaultRunner) {
	faultMu.Lock()
	defer faultMu.Unlock()
	if _, dup := faultRunners[scenario]; dup || fn == nil {
		panic(fmt.Sprintf("lockbench: RegisterFault(%q) twice or with nil", scenario))
	}
	faultRunners[scenario] = fn
}

func runFault(ctx context.Context, spec CellSpec) (Result, error) {
	faultMu.RLock()
	fn := faultRunners[spec.Scenario.Name]
	faultMu.RUnlock()
	if fn == nil {
		return Result{}, fmt.Errorf("%w: scenario %q has no runner (import package faults)", ErrUsage, spec.Scenario.Name)
	}
	start := time.Now()
	cell, err := fn(ctx, spec)
	return Result{Cell: cell, Start: start}, err
}
