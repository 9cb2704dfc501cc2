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
	// OpenLoop: arrivals at a rate, each served by a free client; latency
	// counts from the intended arrival time.
	OpenLoop
	// Fault: a scripted failure (crash, pause, failover, …) run by the
	// runner registered for the scenario (package faults), repeated
	// --repeat times.
	Fault
)

// Scenario is one load shape.
type Scenario struct {
	Name        string
	Description string
	Kind        Kind
	// Keys: the lock of each acquisition is drawn from --locks names by
	// the key distribution (--dist), instead of fixed per client.
	Keys bool
}

var all = []Scenario{
	{Name: "hot", Kind: ClosedLoop,
		Description: "closed loop; client i uses lock i mod --locks (default 1: every client on one lock)"},
	{Name: "keys", Kind: ClosedLoop, Keys: true,
		Description: "closed loop over --locks names, each acquisition's name drawn by --dist uniform|zipf:S|hot:F/P"},
	{Name: "rate", Kind: OpenLoop,
		Description: "open loop: --rate arrivals/s (--arrival constant|poisson), latency from the intended time; beyond --max-inflight dropped"},
	{Name: "burst", Kind: Burst,
		Description: "the herd: all clients queue at once, the first holder waits until all are queued, then the lock passes down the queue once"},
	{Name: "crash", Kind: Fault,
		Description: "the holder dies without releasing (connection cut, no close); time until the next waiter acquires vs TTL / session timeout"},
	{Name: "pause", Kind: Fault,
		Description: "the holder stalls past its TTL, another acquires, the stale holder writes: violations, and a fenced resource refusing the stale write"},
	{Name: "failover", Kind: Fault,
		Description: "the holder's server is lost after the grant (Redis: replica promoted without the key): does a second client get the lock too?"},
	{Name: "restart", Kind: Fault,
		Description: "a Redlock master restarts empty right after a grant; with --redlock-restart-delay ≥ TTL it stays out until the TTL passed"},
	{Name: "latency", Kind: Fault,
		Description: "every server behind a loopback proxy adding --net-delay ± --net-jitter: lock latency and errors under RTT"},
	{Name: "partition", Kind: Fault,
		Description: "servers cut off behind proxies: Redlock with one and three masters cut, ZooKeeper with the client's server cut"},
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
