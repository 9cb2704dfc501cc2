package plan

import (
	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
)

// The cell runner's types a plan is made of, so that a plan is written
// without naming the engine.
type (
	// CellSpec describes one cell; see engine.CellSpec.
	CellSpec = engine.CellSpec
	// Result is a cell's summary with its timeline.
	Result = engine.Result
	// Progress is a cell's state while it runs.
	Progress = engine.Progress
	// Ramp is a staircase of client counts.
	Ramp = engine.Ramp
	// Servers are the addresses of each role's servers.
	Servers = impl.Servers
)

// The cell defaults.
const (
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

// ParseRamp reads "start:step:every", e.g. "4:4:5s".
func ParseRamp(s string) (Ramp, error) { return engine.ParseRamp(s) }
