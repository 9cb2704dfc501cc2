package linear

import (
	"slices"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockbench/lockbench/result"
)

// cut is an instant at which one lock's state is known without looking
// back: inside a grant that cannot end by itself (its holder released it
// with an ok), after its acquire returned and before its release was
// called, with no try, release, renewal or grant that may end in flight.
// Whatever order explains the history, the lock is then held by that
// holder with its token; every acquire still in flight must take effect
// after, and one of unknown outcome may take effect on either side.
type cut struct {
	at     int64
	holder int32
	token  uint64
}

// cuts are part's cuts, in time order.
func cuts(part []op) []cut {
	var cand []cut
	for _, o := range part {
		if isGrant(o.Op) && !o.mayEnd && o.closed != never && o.closed > o.Return+1 {
			tok := uint64(0)
			if o.Fenced {
				tok = o.Token
			}
			cand = append(cand, cut{at: o.Return + 1, holder: o.Client, token: tok})
		}
	}
	slices.SortFunc(cand, func(a, b cut) int { return int(min(max(a.at-b.at, -1), 1)) })
	// blocking: the latest return of an operation, called before the
	// cut, that must not be in flight at it.
	var out []cut
	p := 0
	var blocked int64
	for _, c := range cand {
		for ; p < len(part) && part[p].Call < c.at; p++ {
			o := part[p]
			if o.Kind != result.OpAcquire || isGrant(o.Op) && o.mayEnd {
				blocked = max(blocked, o.Return)
			}
		}
		if blocked < c.at {
			out = append(out, c)
		}
	}
	return out
}

// windows cuts part into windows of about n operations each, as porcupine
// histories, times in ns after part's first call.
func windows(part []op, n int) [][]porcupine.Operation {
	return slice(part, chooseCuts(part, n))
}

// chooseCuts picks part's cuts about n operations apart.
func chooseCuts(part []op, n int) []cut {
	cs := cuts(part)
	var chosen []cut
	last, count := int64(-1), 0
	p := 0
	for _, c := range cs {
		for ; p < len(part) && part[p].Call < c.at; p++ {
			count++
		}
		if count >= n && c.at > last {
			chosen = append(chosen, c)
			last, count = c.at, 0
		}
	}
	return chosen
}

// straddles reports whether an acquire of unknown outcome is in flight
// at c: slice gives it to the window after c alone, so that no two
// windows can both let it take effect, and the window before c judges as
// if it took none there (see firm).
func straddles(part []op, c cut) bool {
	return slices.ContainsFunc(part, func(o op) bool { return unknownAcquire(o) && o.Call < c.at && o.Return >= c.at })
}

// later says whether o belongs to a window after the one ending at to: a
// grant, or an acquire of unknown outcome, still in flight at to takes
// effect after it, if at all (the last window, to = never, keeps them).
func later(o op, to int64) bool {
	return o.Return >= to && (isGrant(o.Op) || unknownAcquire(o) && to != never)
}

func unknownAcquire(o op) bool { return o.Kind == result.OpAcquire && o.Outcome == result.OutUnknown }

// firm are cs without the cuts an unknown acquire straddles: the windows
// between them let each such acquire take effect on either side of the
// cuts dropped, once. A window found illegal next to a straddled cut is
// judged again as part of its firm window, so that an acquire that must
// have taken effect before the cut is not taken for a violation.
func firm(part []op, cs []cut) []cut {
	return slices.DeleteFunc(slices.Clone(cs), func(c cut) bool { return straddles(part, c) })
}

// slice returns part's windows between the cuts given (in order).
func slice(part []op, cs []cut) [][]porcupine.Operation {
	if len(part) == 0 {
		return nil
	}
	t0 := part[0].Call
	rel := func(t int64) int64 {
		if t == never {
			return never
		}
		return t - t0
	}
	var out [][]porcupine.Operation
	from := int64(-1 << 62)
	var startCut *cut
	for i := 0; i <= len(cs); i++ {
		to := int64(never)
		if i < len(cs) {
			to = cs[i].at
		}
		var w []porcupine.Operation
		if startCut != nil {
			s := state{holder: startCut.holder, token: startCut.token}
			w = append(w, porcupine.Operation{ClientId: int(startCut.holder), Input: input{kind: opStart, start: s},
				Call: rel(from) - 1, Output: result.OutOK, Return: rel(from) - 1})
		}
		lo := sort.Search(len(part), func(j int) bool { return part[j].Call >= from })
		for _, o := range part[:lo] { // in flight at from: acquires alone
			if o.Return >= from && o.Kind == result.OpAcquire && !later(o, to) {
				w = append(w, operation(o, rel(from), rel(o.Return)))
			}
		}
		for _, o := range part[lo:] {
			if o.Call >= to {
				break
			}
			ret := rel(o.Return)
			if later(o, to) {
				continue
			}
			w = append(w, operation(o, rel(o.Call), ret))
		}
		out = append(out, w)
		if i < len(cs) {
			from, startCut = cs[i].at, &cs[i]
		}
	}
	return out
}

func operation(o op, call, ret int64) porcupine.Operation {
	return porcupine.Operation{ClientId: int(o.Client), Call: call, Return: ret, Output: o.Outcome,
		Input: input{kind: o.Kind, client: o.Client, token: o.Token, fenced: o.Fenced, mayEnd: o.mayEnd}}
}

// shortest narrows an illegal window w of part down to the shortest
// stretch between two cuts that is illegal on its own, and names it.
func shortest(part []op, w []porcupine.Operation, h *result.History, deadline time.Time) ([]porcupine.Operation, *result.IllegalWindow) {
	best := w
	for _, piece := range slice(part, cuts(part)) {
		if len(piece) >= len(best) || !overlaps(piece, w) {
			continue
		}
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		if porcupine.CheckOperationsTimeout(model(), piece, left) == porcupine.Illegal {
			best = piece
		}
	}
	return best, name(part, best, h)
}

// overlaps reports whether piece lies within w's span.
func overlaps(piece, w []porcupine.Operation) bool {
	lo, hi := span(w)
	plo, phi := span(piece)
	return plo >= lo && phi <= hi
}

func span(w []porcupine.Operation) (lo, hi int64) {
	lo, hi = never, -1<<62
	for _, o := range w {
		lo = min(lo, o.Call)
		if o.Return != never {
			hi = max(hi, o.Return)
		}
		hi = max(hi, o.Call)
	}
	return lo, hi
}

// name describes window w of part.
func name(part []op, w []porcupine.Operation, h *result.History) *result.IllegalWindow {
	t0 := part[0].Call
	lo, hi := span(w)
	iw := &result.IllegalWindow{Lock: h.Name(part[0].Lock), Phase: int(part[0].Phase), Ops: len(w),
		FromS: float64(t0+lo-h.Start) / 1e9, ToS: float64(t0+hi-h.Start) / 1e9}
	seen := map[int]bool{}
	for _, o := range w {
		if in := o.Input.(input); in.kind != opStart && !seen[o.ClientId] {
			seen[o.ClientId] = true
			iw.Clients = append(iw.Clients, o.ClientId)
		}
	}
	slices.Sort(iw.Clients)
	iw.Stuck = stuck(w)
	return iw
}

// stuck is the operation of w the longest partial linearization could
// not take: of those it left out, the one that returned first.
func stuck(w []porcupine.Operation) string {
	res, info := porcupine.CheckOperationsVerbose(model(), w, 5*time.Second)
	if res != porcupine.Illegal {
		return ""
	}
	var longest []int
	for _, part := range info.PartialLinearizations() {
		for _, l := range part {
			if len(l) > len(longest) {
				longest = l
			}
		}
	}
	in := make(map[int]bool, len(longest))
	for _, id := range longest {
		in[id] = true
	}
	first := -1
	for i, o := range w {
		if !in[i] && (first < 0 || o.Return < w[first].Return) {
			first = i
		}
	}
	if first < 0 {
		return ""
	}
	return describe(w[first].Input.(input), w[first].Output.(result.Outcome))
}
