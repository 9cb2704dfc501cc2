package cli

// The program is assembled here, where the layers that must not know each
// other meet: the fault scenarios join the drivers (impl/all, which knows
// no fault). The engine reads the servers' counters through the sandbox's
// kinds, which package plan gives it.
import _ "github.com/lockbench/lockbench/faults" // the fault scenarios
