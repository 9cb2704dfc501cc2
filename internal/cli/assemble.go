package cli

import (
	"github.com/lockbench/lockbench/engine"
	_ "github.com/lockbench/lockbench/faults" // the fault scenarios
	"github.com/lockbench/lockbench/internal/sandbox"
)

// The program is assembled here, where the layers that must not know each
// other meet: the fault scenarios join the drivers (impl/all, which knows
// no fault), and the engine reads the servers' counters through the
// sandbox's kinds.
func init() { engine.UseServerKinds(sandbox.Meter{}) }
