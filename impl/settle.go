package impl

import (
	"context"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Settler is implemented by Lockers that can tell whether a blocked Acquire
// is waiting with nothing in flight: queued on the server, its watch set (or
// asleep between polls), and no notification delivered but unread.
//
// The burst scenario polls it from another goroutine: the first holder keeps
// the lock until every other client is settled, and each later holder hands
// on only when all remaining waiters are settled again. That turns the herd
// counts into exact figures rather than timing-dependent ones. Settled must
// be safe for concurrent use and must not block.
type Settler interface {
	Settled() bool
}

// Preparer is implemented by Lockers that keep per-lock state on the server
// (ZooKeeper's parent nodes). The harness calls Prepare on one client with
// every lock name before the clock starts, so that set-up stays out of the
// measurement.
type Preparer interface {
	Prepare(ctx context.Context, names []string) error
}

// Distributions is implemented by Lockers that keep distributions of their
// own beyond Counters, such as Redlock's masters granted per attempt. The
// harness reads them only after every client has stopped, and merges them
// over clients. Calls made with a WarmingUp context must not be recorded.
type Distributions interface {
	// Histograms returns named histograms of microseconds, in the
	// harness's geometry (1 µs – 1 h, 3 significant digits). A name ends in
	// its reporting unit, e.g. "validity_ms".
	Histograms() map[string]*hdrhistogram.Histogram
	// Vectors returns named count vectors, e.g. "masters_granted"[k]:
	// attempts in which exactly k masters said yes.
	Vectors() map[string][]int64
	// ResetDistributions empties them; the harness calls it before a cell,
	// when no client is running.
	ResetDistributions()
}

type warmupKey struct{}

// WarmingUp marks ctx as belonging to a cell's warm-up: an implementation
// that keeps Distributions records nothing for calls made with it. The
// harness derives one such context per client, not one per call.
func WarmingUp(ctx context.Context) context.Context {
	return context.WithValue(ctx, warmupKey{}, true)
}

// IsWarmingUp reports whether ctx was marked by WarmingUp.
func IsWarmingUp(ctx context.Context) bool {
	v, _ := ctx.Value(warmupKey{}).(bool)
	return v
}
