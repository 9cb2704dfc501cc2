package lockbench

import (
	"context"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/internal/sandbox"
	_ "github.com/lockbench/lockbench/internal/sandbox/kinds" // every server kind, registered
	"github.com/lockbench/lockbench/result"
	_ "github.com/lockbench/lockbench/scenarios" // the load scenarios
)

// The cell runner's types and entry points, re-exported so that the
// benchmarks and library users need only this package (and the drivers
// they import) to run a cell; the CLI runs plans through package plan.
type (
	// CellSpec describes one cell; see engine.CellSpec.
	CellSpec = engine.CellSpec
	// Result is a cell's summary with its timeline.
	Result = engine.Result
	// Progress is a cell's state while it runs.
	Progress = engine.Progress
	// Ramp is a staircase of client counts.
	Ramp = engine.Ramp
	// Scenario is a load shape.
	Scenario = engine.Scenario
	// ServerKinds reads a cell's servers; see engine.ServerKinds.
	ServerKinds = engine.ServerKinds
)

// SandboxKinds reads the servers of every kind lockbench's sandbox knows
// (every kind registered with it: see sandbox.Kinds): their own counters and,
// for servers this process started, their CPU time. Give it as
// CellSpec.ServerKinds for a cell to report what its servers saw beside
// what its clients counted; a plan's cells have it by default.
func SandboxKinds() ServerKinds { return sandbox.Meter{} }

// Arrival processes of the open loop, and the cell defaults.
const (
	ArrivalConstant        = engine.ArrivalConstant
	ArrivalPoisson         = engine.ArrivalPoisson
	DefaultMaxCellTime     = engine.DefaultMaxCellTime
	DefaultConnectParallel = engine.DefaultConnectParallel
)

// Errors a caller branches on: ErrUsage wraps every error about input
// that cannot run as given; ErrNotApplicable a fault scenario staged on a
// driver it does not apply to.
var (
	ErrUsage         = engine.ErrUsage
	ErrNotApplicable = engine.ErrNotApplicable
)

// RunCell connects the clients, runs one cell and returns its result.
func RunCell(ctx context.Context, spec CellSpec) (result.Cell, error) {
	return engine.RunCell(ctx, spec)
}

// RunCellDetail is RunCell with the cell's per-second histograms.
func RunCellDetail(ctx context.Context, spec CellSpec) (Result, error) {
	return engine.RunCellDetail(ctx, spec)
}

// ParseRamp reads "start:step:every", e.g. "4:4:5s".
func ParseRamp(s string) (Ramp, error) { return engine.ParseRamp(s) }

// LookupScenario returns the scenario registered under name.
func LookupScenario(name string) (Scenario, bool) { return engine.LookupScenario(name) }
