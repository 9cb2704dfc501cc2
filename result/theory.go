package result

import "math"

// Kind is how a scenario drives its clients; reports treat cells of each
// kind differently (a burst's rate is set by its hand-offs, a fault's
// latency is the fault's).
type Kind string

// Kinds of scenario.
const (
	KindClosed Kind = "closed" // each client loops acquire → hold → release → think
	KindBurst  Kind = "burst"  // all clients queue at once and acquire once each
	KindOpen   Kind = "open"   // arrivals at a rate, latency from the intended time
	KindFault  Kind = "fault"  // a scripted failure, repeated
	KindWait   Kind = "wait"   // one client holds, the others wait: what waiting costs
)

// legacyKinds are the kinds of the scenarios of schema 1, whose cells did
// not say.
var legacyKinds = map[string]Kind{
	"hot": KindClosed, "keys": KindClosed, "rate": KindOpen, "burst": KindBurst,
	"crash": KindFault, "pause": KindFault, "failover": KindFault, "restart": KindFault,
	"latency": KindFault, "partition": KindFault,
}

// KindOf is the cell's kind; for a cell written before cells said, the
// kind its scenario had then (closed for one unknown).
func (c Cell) KindOf() Kind {
	if c.Kind != "" {
		return c.Kind
	}
	if k, ok := legacyKinds[c.Scenario]; ok {
		return k
	}
	return KindClosed
}

// Theory is what an implementation's way of waking waiters predicts for
// release wake-ups: to drain a burst of n queued clients, and per hand-off
// with n clients waiting. A driver declares it; every cell of the driver
// carries it, so that reports draw it from the data alone.
type Theory struct {
	// Waiters says in words how waiters learn of a release, for legends:
	// "all watch all", "predecessor watch".
	Waiters string `json:"waiters"`
	// Formula is the burst figure as people write it, e.g. "n(n−1)/2";
	// PerHandoffFormula is the per-hand-off figure, e.g. "n−1".
	Formula           string `json:"formula"`
	PerHandoffFormula string `json:"per_handoff_formula"`
	// Poly is the burst figure as a polynomial in n:
	// Poly[0] + Poly[1]·n + Poly[2]·n².
	Poly [3]float64 `json:"poly"`
	// AbandonFormula and AbandonPoly are the release wake-ups one waiter
	// giving up causes (its node deleted) with n clients in the queue, the
	// holder and the one leaving counted: AbandonPoly[0] + AbandonPoly[1]·n.
	AbandonFormula string     `json:"abandon_formula,omitempty"`
	AbandonPoly    [2]float64 `json:"abandon_poly,omitzero"`
}

// Abandon is the wake-ups one abandonment causes with n clients queued,
// the holder and the abandoner included; ok is false when the theory does
// not say.
func (t Theory) Abandon(n float64) (float64, bool) {
	if t.AbandonFormula == "" {
		return 0, false
	}
	return t.AbandonPoly[0] + t.AbandonPoly[1]*n, true
}

// Burst is the release wake-ups theory predicts to drain a burst of n
// clients queued on one lock.
func (t Theory) Burst(n float64) float64 { return t.Poly[0] + t.Poly[1]*n + t.Poly[2]*n*n }

// BurstWakeups is Burst for a whole number of clients.
func (t Theory) BurstWakeups(n int) int64 { return int64(math.Round(t.Burst(float64(n)))) }

// PerHandoff is the release wake-ups of one hand-off with n clients
// waiting: the burst of n less the burst of n−1.
func (t Theory) PerHandoff(n float64) float64 { return t.Burst(n) - t.Burst(n-1) }

// Theories every waiting scheme so far falls into.
var (
	// WatchAll: every waiter is told of every change, n(n−1)/2 to drain n.
	// A waiter leaving wakes every other waiter: n−2.
	WatchAll = Theory{Waiters: "all watch all", Formula: "n(n−1)/2", PerHandoffFormula: "n−1", Poly: [3]float64{0, -0.5, 0.5},
		AbandonFormula: "n−2", AbandonPoly: [2]float64{-2, 1}}
	// WatchPredecessor: only the next waiter is told, n−1 to drain n. A
	// waiter leaving wakes its successor, which watches the node before
	// it instead: 1.
	WatchPredecessor = Theory{Waiters: "predecessor watch", Formula: "n−1", PerHandoffFormula: "1", Poly: [3]float64{-1, 1, 0},
		AbandonFormula: "1", AbandonPoly: [2]float64{1, 0}}
)

// TheoryOf is the cell's theory; for a burst cell of schema 1, which kept
// only the figure, the theory that figure matches, if any.
func (c Cell) TheoryOf() *Theory {
	if c.Theory != nil || c.TheoryWakeups == nil || c.Clients < 3 {
		return c.Theory
	}
	for _, t := range []Theory{WatchAll, WatchPredecessor} {
		if t.BurstWakeups(c.Clients) == *c.TheoryWakeups {
			return &t
		}
	}
	return nil
}

// OnServer says t is a theory of no wake-ups at all: the waiters queue
// on the server inside a blocked request, and a release grants the next
// by answering it. Watches such a server fires (etcd's Lock service runs
// the recipe inside the server) wake its own waiters, not the clients.
func (t *Theory) OnServer() bool {
	return t != nil && t.Poly == [3]float64{} && t.AbandonFormula == ""
}
