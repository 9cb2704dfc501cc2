// Package scenarios lists the load shapes lockbench can put on a lock. A
// scenario is a small value; the harness in the root package runs it.
package scenarios

import "slices"

// Kind is how the harness drives clients in a scenario.
type Kind int

const (
	// ClosedLoop: each client loops acquire → hold → release → think.
	ClosedLoop Kind = iota
	// Burst: all clients arrive at once and each acquires exactly once.
	Burst
)

// Scenario is one load shape.
type Scenario struct {
	Name        string
	Description string
	Kind        Kind
}

var all = []Scenario{
	{Name: "hot", Kind: ClosedLoop,
		Description: "closed loop; client i uses lock i mod --locks (default 1: every client on one lock)"},
	{Name: "burst", Kind: Burst,
		Description: "the herd: all clients queue at once, the first holder waits until all are queued, then the lock passes down the queue once"},
}

// All returns every scenario, sorted by name.
func All() []Scenario {
	out := slices.Clone(all)
	slices.SortFunc(out, func(a, b Scenario) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	return out
}

// Lookup finds a scenario by name.
func Lookup(name string) (Scenario, bool) {
	for _, s := range all {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// Names returns every scenario name, sorted.
func Names() []string {
	var out []string
	for _, s := range All() {
		out = append(out, s.Name)
	}
	return out
}
