package linear

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockbench/lockbench/result"
)

// DefaultBudget is how long a cell's check may take before its verdict
// is unknown.
const DefaultBudget = 20 * time.Second

// WindowOps is about how many operations one window holds: porcupine's
// memory grows with the square of a window's length (a bitset of the
// window per state it caches), its time about linearly once windows are
// this short.
const WindowOps = 2000

// never is the return of an acquire whose outcome is unknown: it may take
// effect at any time after its call (Jepsen's indeterminate operation).
const never = math.MaxInt64

// op is a recorded operation prepared for the check.
type op struct {
	result.Op
	mayEnd bool  // a grant that may end without its holder
	closed int64 // a grant's closing release's call; never when none
}

// Report is a check's findings, with what the visualization needs.
type Report struct {
	result.Safety
	// illegal is the shortest window found illegal, as checked.
	illegal []porcupine.Operation
}

// Check checks h within budget and returns the figures it derives.
func Check(h *result.History, budget time.Duration) Report {
	return check(h, budget, WindowOps)
}

// check is Check with windows of about n operations: tests shrink n so
// that short histories are cut into many windows.
func check(h *result.History, budget time.Duration, n int) Report {
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	began := time.Now()
	deadline := began.Add(budget)
	var rep Report
	rep.Linearizable = result.Linearizable
	rep.Dropped = h.Dropped
	for _, o := range h.Ops {
		if h.Until != 0 && o.Call > h.Until {
			continue
		}
		rep.Ops++
		if o.Outcome == result.OutUnknown {
			rep.Unknown++
		}
	}
	for _, part := range partitions(h) {
		rep.LeaseExpiries += expiries(part)
		if rep.Linearizable == result.NotLinearizable {
			continue // counted, not checked: one illegal window is named
		}
		chosen := chooseCuts(part, n)
		ws := slice(part, chosen)
		rep.Windows += len(ws)
		for k, w := range ws {
			left := time.Until(deadline)
			if left <= 0 {
				rep.Linearizable = result.VerdictUnknown
				break
			}
			res := porcupine.CheckOperationsTimeout(model(), w, left)
			if res == porcupine.Illegal && (k > 0 && straddles(part, chosen[k-1]) || k < len(chosen) && straddles(part, chosen[k])) {
				w = firmWindow(part, chosen, k)
				res = porcupine.CheckOperationsTimeout(model(), w, time.Until(deadline))
			}
			switch res {
			case porcupine.Illegal:
				rep.Linearizable = result.NotLinearizable
				rep.illegal, rep.Illegal = shortest(part, w, h, deadline)
			case porcupine.Unknown:
				rep.Linearizable = result.VerdictUnknown
			}
			if rep.Linearizable != result.Linearizable {
				break
			}
		}
	}
	if rep.Ops == 0 {
		rep.Linearizable = ""
	}
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	rep.CheckMs = float64(time.Since(began).Microseconds()) / 1e3
	rep.CheckAllocMB = float64(ms1.TotalAlloc-ms0.TotalAlloc) / (1 << 20)
	return rep
}

// firmWindow is the window of part between firm cuts that holds window k
// of those chosen.
func firmWindow(part []op, chosen []cut, k int) []porcupine.Operation {
	fs := firm(part, chosen)
	m := 0
	if k > 0 {
		from := chosen[k-1].at
		for m < len(fs) && fs[m].at <= from {
			m++
		}
	}
	return slice(part, fs)[m]
}

// partitions splits h by lock and phase, each in call order, with every
// grant marked as closed or as one that may end by itself. Operations
// called after h stops being complete are left out.
func partitions(h *result.History) [][]op {
	type key struct {
		lock  int32
		phase uint16
	}
	by := map[key][]op{}
	for _, o := range h.Ops {
		if h.Until != 0 && o.Call > h.Until {
			continue
		}
		k := key{o.Lock, o.Phase}
		by[k] = append(by[k], op{Op: o, closed: never})
	}
	keys := make([]key, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.lock, b.lock), cmp.Compare(a.phase, b.phase)) })
	out := make([][]op, 0, len(keys))
	for _, k := range keys {
		part := dropIdle(by[k])
		mark(part, h.Expiring)
		slices.SortFunc(part, func(a, b op) int {
			return cmp.Or(cmp.Compare(a.Call, b.Call), cmp.Compare(a.Client, b.Client), cmp.Compare(a.Return, b.Return))
		})
		out = append(out, part)
	}
	return out
}

// dropIdle leaves out the acquires of unknown outcome of a partition in
// which no try found the lock held: such an acquire, had it taken effect,
// would leave the lock held by a client that does not know it, until its
// lease ends — a state from which every other operation is legal exactly
// when it is from a free lock, but for a try answering held. Without
// such a try it can explain nothing, and each one left in doubles the
// states the search carries (a cell's end leaves one per waiter).
func dropIdle(part []op) []op {
	if slices.ContainsFunc(part, func(o op) bool { return o.Outcome == result.OutHeld }) {
		return part
	}
	return slices.DeleteFunc(part, func(o op) bool { return o.Kind == result.OpAcquire && o.Outcome == result.OutUnknown })
}

// mark walks each client's operations in its own order and notes, for
// every grant, the call of the release that closed it and whether it may
// have ended by itself: a release or renewal that answered lost or
// unknown, or none at all, on a lock whose leases expire. An unknown
// acquire is given a return of never. Operations must come in the
// client's order.
func mark(part []op, expiring bool) {
	slices.SortFunc(part, func(a, b op) int {
		return cmp.Or(cmp.Compare(a.Client, b.Client), cmp.Compare(a.Call, b.Call), cmp.Compare(a.Return, b.Return))
	})
	open := -1
	var prevRet int64 // the client's previous operation's return, as recorded
	for i := range part {
		o := &part[i]
		if i > 0 && part[i-1].Client != o.Client {
			if open >= 0 && expiring {
				part[open].mayEnd = true
			}
			open, prevRet = -1, 0
		}
		// A client's operations follow one another: one that a clock
		// reading shared with the one before makes look concurrent with it
		// starts a nanosecond after.
		if i > 0 && part[i-1].Client == o.Client && o.Call <= prevRet {
			o.Call = prevRet + 1
			o.Return = max(o.Return, o.Call)
		}
		prevRet = o.Return
		switch {
		case isGrant(o.Op):
			if open >= 0 && expiring {
				part[open].mayEnd = true // granted again without a release
			}
			open = i
		case o.Kind == result.OpAcquire && o.Outcome == result.OutUnknown:
			o.Return = never
		case (o.Kind == result.OpRelease || o.Kind == result.OpRenew) && open >= 0:
			if o.Outcome != result.OutOK && expiring {
				part[open].mayEnd = true
			}
			if o.Kind == result.OpRelease {
				part[open].closed = o.Call
				open = -1
			}
		}
	}
	if open >= 0 && expiring {
		part[open].mayEnd = true
	}
}

func isGrant(o result.Op) bool {
	return (o.Kind == result.OpAcquire || o.Kind == result.OpTry) && o.Outcome == result.OutOK
}

// expiries counts the grants of part that ended by themselves while
// their holder held on: another client was granted the lock between the
// grant and its holder's (lost) release.
func expiries(part []op) int64 {
	var grants []op
	for _, o := range part {
		if isGrant(o.Op) {
			grants = append(grants, o)
		}
	}
	var n int64
	for i, g := range grants {
		if !g.mayEnd || g.closed == never {
			continue // held on, or never released: a holder that died is not one that held on
		}
		for _, x := range grants[i+1:] {
			if x.Call >= g.closed {
				break
			}
			if x.Client != g.Client && x.Return > g.Return && x.Return < g.closed {
				n++
				break
			}
		}
	}
	return n
}
