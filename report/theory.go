package report

import (
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/scenarios"
)

// isBurst says whether a scenario is a one-shot burst rather than a closed
// loop. Unknown scenarios (from a newer lockbench) count as closed loops.
func isBurst(scenario string) bool {
	s, ok := scenarios.Lookup(scenario)
	return ok && s.Kind == scenarios.Burst
}

// isFault says whether a scenario injects a failure, so that its
// throughput and latency describe the failure more than the lock.
func isFault(scenario string) bool {
	s, ok := scenarios.Lookup(scenario)
	return ok && s.Kind == scenarios.Fault
}

// withoutFaults keeps the cells of load scenarios: those whose numbers
// belong on throughput, latency and capacity curves.
func withoutFaults(cells []Cell) []Cell {
	var out []Cell
	for _, c := range cells {
		if !isFault(c.Scenario) {
			out = append(out, c)
		}
	}
	return out
}

// closedLoops keeps the cells of closed-loop scenarios: a burst's rate is
// set by its hold time and hand-offs, and would flatten the others' curves.
func closedLoops(cells []Cell) []Cell {
	var out []Cell
	for _, c := range cells {
		if !isBurst(c.Scenario) {
			out = append(out, c)
		}
	}
	return out
}

// herdKnown is how waiters of an implementation learn of a release, and
// whether that is known at all.
type herdKnown struct {
	herd  impl.Herd
	known bool
}

// herdOf says how an implementation's waiters learn of a release: from the
// registry when the implementation is registered in this process (the
// command registers all), otherwise from the data, so that a results
// directory renders the same anywhere: a burst cell's theory of n(n−1)/2
// wake-ups means every waiter watches every change, n−1 a predecessor
// watch; retries without notifications mean polling.
func herdOf(name string, cells []Cell) herdKnown {
	if d, ok := impl.Lookup(name); ok {
		return herdKnown{d.Herd, true}
	}
	var retries, notes int64
	for _, c := range cells {
		if c.Impl != name {
			continue
		}
		retries += c.Retries
		notes += c.Notifications + c.Wakeups
		if c.TheoryWakeups == nil || c.Clients < 3 {
			continue
		}
		for _, h := range []impl.Herd{impl.WatchAll, impl.WatchPredecessor} {
			if t, _ := impl.TheoryWakeups(h, c.Clients); t == *c.TheoryWakeups {
				return herdKnown{h, true}
			}
		}
	}
	if retries > 0 && notes == 0 {
		return herdKnown{impl.Polling, true}
	}
	return herdKnown{}
}

// theoryFormula names the formula behind a burst cell's theory, for
// sentences: "n(n−1)/2", "n−1", or "" when it is neither.
func theoryFormula(c Cell) string {
	if c.TheoryWakeups == nil {
		return ""
	}
	t := *c.TheoryWakeups
	all, _ := impl.TheoryWakeups(impl.WatchAll, c.Clients)
	pred, _ := impl.TheoryWakeups(impl.WatchPredecessor, c.Clients)
	switch {
	case t == all && t != pred:
		return "n(n−1)/2"
	case t == pred && t != all:
		return "n−1"
	}
	return ""
}

// notificationTheory is what theory predicts for notifications per
// acquisition in a closed loop of n clients on one lock: each release
// notifies every other waiter (n−1) when all watch all, one when each
// watches its predecessor.
func notificationTheory(h herdKnown, n int) (float64, bool) {
	if !h.known || n < 2 {
		return 0, false
	}
	switch h.herd {
	case impl.WatchAll:
		return float64(n - 1), true
	case impl.WatchPredecessor:
		return 1, true
	}
	return 0, false
}

// releaseWakeups is the wake-up count a burst cell is judged by: release
// wake-ups when the implementation tells them apart, else all wake-ups.
func releaseWakeups(c Cell) (n int64, what string) {
	if c.ReleaseWakeups > 0 {
		return c.ReleaseWakeups, "release wake-ups"
	}
	return c.Wakeups, "wake-ups"
}
