package linear

import (
	"fmt"

	"github.com/anishathalye/porcupine"

	"github.com/lockbench/lockbench/result"
)

// opStart is the kind of a window's first, synthetic operation: it sets
// the state the window starts from (see cut).
const opStart result.OpKind = 0

// input is an operation as the model sees it.
type input struct {
	kind   result.OpKind
	client int32
	token  uint64
	fenced bool
	// mayEnd: this grant may end without its holder (its release or
	// renewal answered lost or unknown, or it was never released, on a
	// lock whose leases expire).
	mayEnd bool
	// start: the state a window begins with (kind opStart).
	start state
}

// state is the sequential mutex: who holds it (free: -1), whether that
// grant may end by itself, and the highest fencing token seen.
type state struct {
	holder int32
	mayEnd bool
	token  uint64
}

var free = state{holder: -1}

// step is every state the mutex may be in after in answered out in s;
// none when it could not have answered so.
func step(s state, in input, out result.Outcome) []state {
	switch in.kind {
	case opStart:
		return []state{in.start}
	case result.OpAcquire, result.OpTry:
		return stepAcquire(s, in, out)
	case result.OpRelease:
		switch out {
		case result.OutOK:
			if s.holder != in.client {
				return nil
			}
			return []state{{holder: -1, token: s.token}}
		case result.OutLost:
			if s.holder == in.client {
				return []state{{holder: -1, token: s.token}} // it had expired
			}
			return []state{s}
		default: // unknown: released, or still held until it expires
			if s.holder == in.client {
				kept := s
				kept.mayEnd = true
				return []state{{holder: -1, token: s.token}, kept}
			}
			return []state{s}
		}
	case result.OpRenew:
		switch out {
		case result.OutOK:
			if s.holder != in.client {
				return nil
			}
			return []state{s}
		case result.OutLost:
			if s.holder == in.client {
				return []state{{holder: -1, token: s.token}}
			}
			return []state{s}
		default:
			return []state{s}
		}
	}
	return nil
}

// stepAcquire steps an acquire or a try.
func stepAcquire(s state, in input, out result.Outcome) []state {
	// A lock held by a grant that may end can be free by now.
	takeable := s.holder == -1 || s.mayEnd
	switch out {
	case result.OutOK:
		if !takeable || in.fenced && s.token != 0 && in.token <= s.token {
			return nil
		}
		next := state{holder: in.client, mayEnd: in.mayEnd, token: s.token}
		if in.fenced {
			next.token = in.token
		}
		return []state{next}
	case result.OutHeld:
		if s.holder == -1 {
			return nil
		}
		return []state{s}
	default: // unknown: granted to a client that does not know it, or not
		if !takeable {
			return []state{s}
		}
		return []state{s, {holder: in.client, mayEnd: true, token: s.token}}
	}
}

// model is the mutex as porcupine wants it.
func model() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{free} },
		Step: func(s, in, out any) []any {
			next := step(s.(state), in.(input), out.(result.Outcome))
			if len(next) == 0 {
				return nil
			}
			r := make([]any, len(next))
			for i, n := range next {
				r[i] = n
			}
			return r
		},
		Hash: func(s any) uint64 {
			x := s.(state)
			h := uint64(uint32(x.holder))<<1 ^ x.token*0x9e3779b97f4a7c15
			if x.mayEnd {
				h ^= 1
			}
			return h
		},
		DescribeOperation: func(in, out any) string { return describe(in.(input), out.(result.Outcome)) },
		DescribeState: func(s any) string {
			x := s.(state)
			if x.holder < 0 {
				return fmt.Sprintf("free (token %d)", x.token)
			}
			end := ""
			if x.mayEnd {
				end = ", may expire"
			}
			return fmt.Sprintf("held by %d (token %d%s)", x.holder, x.token, end)
		},
	}
	return nm.ToModel()
}

// describe is an operation as the visualization and IllegalWindow.Stuck
// show it.
func describe(in input, out result.Outcome) string {
	if in.kind == opStart {
		return fmt.Sprintf("window starts: held by %d (token %d)", in.start.holder, in.start.token)
	}
	s := fmt.Sprintf("client %d %s → %s", in.client, in.kind, out)
	if in.fenced && out == result.OutOK && (in.kind == result.OpAcquire || in.kind == result.OpTry) {
		s += fmt.Sprintf(" (token %d)", in.token)
	}
	return s
}
