package faults

import (
	"errors"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/linear"
	"github.com/lockbench/lockbench/result"
)

// history is what a fault cell's clients did, for the linearizability
// check: each repeat's lock has a name of its own, so a key is a phase
// of the script. Its clients are numbered as they first act. Guarded by
// the tally's mutex; no fault scenario records on a hot path.
type history struct {
	ops     []result.Op
	clients map[impl.Locker]int32
	locks   map[string]int32
	names   []string
	leases  map[impl.Lease]grant
}

// grant is a lease's grant, with its client and the sessions the client
// had lost by then.
type grant struct {
	op       result.Op
	l        impl.Locker
	sessions int64
}

// acquiredOp records l's Acquire of name, called at call: a grant, or one
// whose outcome is unknown (an error or a timeout may still take effect).
func (t *tally) acquiredOp(l impl.Locker, name string, call time.Time, lease impl.Lease, err error) {
	ret := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	h := &t.hist
	if h.clients == nil {
		h.clients, h.locks, h.leases = map[impl.Locker]int32{}, map[string]int32{}, map[impl.Lease]grant{}
	}
	c, ok := h.clients[l]
	if !ok {
		c = int32(len(h.clients))
		h.clients[l] = c
	}
	k, ok := h.locks[name]
	if !ok {
		k = int32(len(h.names))
		h.locks[name] = k
		h.names = append(h.names, name)
	}
	op := result.Op{Call: call.UnixNano(), Return: ret.UnixNano(), Lock: k, Client: c, Kind: result.OpAcquire, Outcome: result.OutUnknown}
	if err == nil && lease != nil {
		op.Outcome = result.OutOK
		op.Token, op.Fenced = lease.Fence()
		h.leases[lease] = grant{op: op, l: l, sessions: l.Counters().SessionLost.Load()}
	}
	h.ops = append(h.ops, op)
}

// releasedOp records the release of lease, called at call, and what it
// answered: ok, the lock already lost, or unknown.
func (t *tally) releasedOp(lease impl.Lease, call time.Time, err error) {
	ret := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	g, ok := t.hist.leases[lease]
	if !ok {
		return
	}
	delete(t.hist.leases, lease)
	out := result.OutUnknown
	switch {
	case err == nil:
		out = result.OutOK
	case errors.Is(err, impl.ErrLockLost), errors.Is(err, impl.ErrSessionLost):
		out = result.OutLost
	}
	if out == result.OutOK && g.l.Counters().SessionLost.Load() != g.sessions {
		// The holder's library told it its session ended, though the
		// release answered ok (etcd's Unlock deletes whatever is there):
		// the grant ended before the release.
		out = result.OutLost
	}
	t.hist.ops = append(t.hist.ops, result.Op{Call: call.UnixNano(), Return: ret.UnixNano(), Lock: g.op.Lock, Client: g.op.Client,
		Kind: result.OpRelease, Outcome: out})
}

// safety derives the cell's safety figures: the violations by kind, the
// stale writes the pause fault's resources accepted, and the check of the
// history. The caller holds the mutex.
func (t *tally) safety(c *result.Cell, expiring bool) {
	s := &result.Safety{Tokens: t.tokens}
	for _, v := range c.Violations {
		switch v.Kind {
		case "overlap":
			s.Overlaps++
		case "token_regression", "token_duplicate":
			s.TokenRegressions++
		}
	}
	switch {
	case t.g.used:
		s.Guarded, s.GuardCounts = true, t.g.fig
	case t.g.note != "":
		s.GuardNote = t.g.note
	case t.guarding():
		// freeze, partition and the connection's locks' scripts keep
		// their holders off the register: it is on the very servers they
		// freeze, cut or restart, and a holder stalled on it would hold
		// the lock through what those scripts time.
		s.GuardNote = "this scenario's holders do not write it: its script stalls the servers it lives on"
	}
	if t.guarded {
		// The pause script knows which write was stale: the stalled
		// holder's, made after another's grant. The register can only
		// name the write that overwrote an increment, the later holder's.
		s.Guarded = true
		s.StaleWritesFenced, s.StaleWritesUnfenced = t.accepted, t.unfencedAccepted
	}
	if len(t.hist.ops) > 0 {
		h := &result.History{Start: t.start.UnixNano(), Ops: t.hist.ops, Names: t.hist.names, Expiring: expiring}
		rep := linear.Check(h, linear.DefaultBudget)
		rep.Overlaps, rep.TokenRegressions, rep.Tokens = s.Overlaps, s.TokenRegressions, s.Tokens
		rep.KeepGuard(s)
		*s = rep.Safety
		c.History = h
	}
	c.Safety = s
}

// unfencedStale counts a stale write the unfenced resource accepted.
func (t *tally) unfencedStale() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unfencedAccepted++
}
