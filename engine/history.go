package engine

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/linear"
	"github.com/lockbench/lockbench/result"
)

// DefaultHistoryOps bounds the operations a cell records for its
// linearizability check, over all its clients (40 bytes each): each
// client's share is allocated before the clock starts. It holds a 10 s
// cell of the locks that hand over fewest than 3,000 times a second
// (every server-backed row at 32 clients here) whole; a faster one is
// checked up to where the first client's log filled, and says so. The
// check costs tens of microseconds of CPU an operation: a bound of a
// million would spend half a minute on an in-process cell.
const DefaultHistoryOps = 1 << 16

// minClientOps is the least a client's log holds, however many clients.
const minClientOps = 512

// startHistory gives every client a log of its share of the cell's
// operations, unless the spec turned recording off.
func (r *Cell) startHistory() {
	n := r.Spec.HistoryOps
	if n < 0 {
		return
	}
	if n == 0 {
		n = DefaultHistoryOps
	}
	per := max(n/max(len(r.Clients), 1), minClientOps)
	for _, w := range r.Clients {
		if w.hist == nil {
			w.hist = result.NewOpLog(per)
		}
	}
}

// lockIndex is the number in a cell's lock name ("lock-7" → 7), without
// allocating; -1 for a name of another form.
func lockIndex(name string) int32 {
	i := strings.LastIndexByte(name, '-')
	n, err := strconv.Atoi(name[i+1:])
	if err != nil {
		return -1
	}
	return int32(n)
}

// recordOp adds one operation to w's log; no lock, no allocation.
func (w *Client) recordOp(k result.OpKind, lock int32, call, ret time.Time, out result.Outcome, lease impl.Lease) {
	if w.hist == nil {
		return
	}
	op := result.Op{Call: call.UnixNano(), Return: ret.UnixNano(), Lock: lock, Client: int32(w.id), Kind: k, Outcome: out}
	if lease != nil && out == result.OutOK {
		op.Token, op.Fenced = lease.Fence()
	}
	w.hist.Add(op)
}

// outcome is what a release or renewal's error says of it.
func outcome(err error) result.Outcome {
	switch {
	case err == nil:
		return result.OutOK
	case errors.Is(err, impl.ErrLockLost), errors.Is(err, impl.ErrSessionLost):
		return result.OutLost
	}
	return result.OutUnknown
}

// history joins the clients' logs; nil when none recorded.
func (r *Cell) history() *result.History {
	logs := make([]*result.OpLog, 0, len(r.Clients))
	for _, w := range r.Clients {
		if w.hist != nil {
			logs = append(logs, w.hist)
		}
	}
	if len(logs) == 0 {
		return nil
	}
	names := make([]string, min(r.names.len(), cachedNames))
	for i := range names {
		names[i] = r.names.at(i)
	}
	return result.HistoryOf(r.start.UnixNano(), logs, names, expires(r.Driver.Caps))
}

// expires says whether a lock's grants can end without their holder.
func expires(c impl.Caps) bool { return c.Any(impl.LeaseTTL | impl.LeaseSession | impl.LeaseConn) }

// judgeSafety fills the cell's safety figures: the overlap checker's
// counts and the linearizability check of its history, within the
// spec's budget.
func (r *Cell) judgeSafety(cell *result.Cell) {
	overlaps, tokens := r.check.Kinds()
	s := &result.Safety{Overlaps: overlaps, TokenRegressions: tokens, Tokens: result.TokensNone}
	if r.Driver.Caps.Has(impl.Fencing) {
		s.Tokens = result.TokensLock
	}
	if h := r.history(); h != nil {
		budget := r.Spec.CheckBudget
		if budget <= 0 {
			budget = linear.DefaultBudget
		}
		rep := linear.Check(h, budget)
		rep.Overlaps, rep.TokenRegressions, rep.Tokens = s.Overlaps, s.TokenRegressions, s.Tokens
		*s = rep.Safety
		cell.History = h
	}
	if r.Spec.HistoryOps < 0 {
		s.Linearizable = result.NotChecked
	}
	r.guardSafety(s)
	cell.Safety = s
}
