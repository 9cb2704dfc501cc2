package cli

import (
	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/internal/sandbox"
)

// The program is assembled here, where the layers that must not know each
// other meet: the engine reads the servers' counters through the sandbox's
// kinds.
func init() { engine.UseServerKinds(sandbox.Meter{}) }
