package impl

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Driver describes one implementation: how to build a client and what
// servers it needs.
type Driver struct {
	Name        string
	Description string
	Needs       Needs
	// Herd is how waiters learn of a release; it fixes the theory lines.
	Herd Herd
	// New connects one simulated client. It returns once the connection or
	// session is established, so that no set-up lands inside a measurement.
	New func(ctx context.Context, cfg Config) (Locker, error)
	// ServerStats, if set, reads the servers' own counters (cumulative), so
	// that a cell can report deltas beside what the clients counted. It
	// returns an error wrapping ErrStatsRefused when the server will not say.
	ServerStats func(ctx context.Context, s Servers) (map[string]int64, error)
	// Cleanup, if set, removes what a cell left on the servers under its
	// namespace (ZooKeeper's lock nodes). The harness calls it once the
	// cell's sessions are closed and its counters read, on a connection of
	// its own, so it touches no measurement.
	Cleanup func(ctx context.Context, s Servers, namespace string) error
}

var (
	mu      sync.RWMutex
	drivers = map[string]Driver{}
)

// Register makes an implementation available by name. It panics on an empty
// name, a nil constructor or a duplicate name: those are programming errors.
func Register(d Driver) {
	mu.Lock()
	defer mu.Unlock()
	if d.Name == "" || d.New == nil {
		panic("impl: Register with empty name or nil New")
	}
	if _, dup := drivers[d.Name]; dup {
		panic(fmt.Sprintf("impl: Register called twice for %q", d.Name))
	}
	drivers[d.Name] = d
}

// Names returns the registered implementation names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Lookup returns the driver registered under name.
func Lookup(name string) (Driver, bool) {
	mu.RLock()
	defer mu.RUnlock()
	d, ok := drivers[name]
	return d, ok
}
