package sandbox

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/internal/serverkind"
)

// Meter reads the servers of the registered kinds for a cell: each kind's
// own counters (Kind.Stats) and the CPU time of the servers this process
// started. It is the engine's view of the server kinds (engine.ServerKinds),
// which the program's assembly hands over; the sandbox itself knows no
// engine.
type Meter struct{}

// Counters returns the Stats of kind, or nil when the kind keeps no
// counters or is not registered.
func (Meter) Counters(kind string) func(ctx context.Context, addrs []string) (map[string]int64, error) {
	if k, ok := LookupKind(kind); ok && k.Stats != nil {
		return k.Stats
	}
	return nil
}

// Counts returns what kind's counters mean (Kind.Counts), or nil when the
// kind says nothing of them or is not registered.
func (Meter) Counts(kind string) func(delta map[string]int64) serverkind.Counts {
	if k, ok := LookupKind(kind); ok && k.Counts != nil {
		return k.Counts
	}
	return nil
}

// CPUTime is CPUTime.
func (Meter) CPUTime(addr string) (time.Duration, bool) { return CPUTime(addr) }
