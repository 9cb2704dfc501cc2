package result

// Verdict is a linearizability check's answer for a cell.
type Verdict string

// Verdicts. Unknown is a check that ran out of its time budget before it
// could decide: said, not counted as a violation.
const (
	Linearizable    Verdict = "linearizable"
	NotLinearizable Verdict = "not"
	VerdictUnknown  Verdict = "unknown"
	// NotChecked: the cell recorded no history (--history=false), so
	// neither safe nor unsafe is claimed of it by linearizability.
	NotChecked Verdict = "not checked"
)

// TokenSource says where a cell's fencing tokens came from.
type TokenSource string

// Token sources: the lock's own grant (Lease.Fence), a counter drawn after
// the grant where the lock gives none (racy: a holder that stalls between
// the two can draw above its successor), or none at all.
const (
	TokensLock    TokenSource = "lock"
	TokensCounter TokenSource = "post-grant counter"
	TokensNone    TokenSource = "none"
)

// GuardCounts are a guarded register's figures: one client's accesses,
// or a cell's. StaleWritesFenced and StaleWritesUnfenced are stale writes
// (by a holder whose lock had passed to another) that a resource
// accepted: one checking the writer's fencing token, one taking every
// write.
type GuardCounts struct {
	StaleWritesFenced   int64 `json:"stale_writes_fenced"`
	StaleWritesUnfenced int64 `json:"stale_writes_unfenced"`
	// LostUpdates are increments of the unfenced guarded counter that a
	// later write overwrote (the final value falls short of the
	// acknowledged increments by as many); LostUpdatesFenced the same of
	// the fenced one.
	LostUpdates       int64 `json:"lost_updates"`
	LostUpdatesFenced int64 `json:"lost_updates_fenced"`
	// GuardedWrites are the increments the unfenced counter acknowledged;
	// StaleWritesRefused the holders' accesses the fenced one refused for
	// a token below one it had seen; GuardErrors the accesses that failed
	// or timed out (their outcome unknown, counted in no other figure).
	GuardedWrites      int64 `json:"guarded_writes,omitempty"`
	StaleWritesRefused int64 `json:"stale_writes_refused,omitempty"`
	GuardErrors        int64 `json:"guard_errors,omitempty"`
}

// Add adds o's counts to g.
func (g *GuardCounts) Add(o GuardCounts) {
	g.StaleWritesFenced += o.StaleWritesFenced
	g.StaleWritesUnfenced += o.StaleWritesUnfenced
	g.LostUpdates += o.LostUpdates
	g.LostUpdatesFenced += o.LostUpdatesFenced
	g.GuardedWrites += o.GuardedWrites
	g.StaleWritesRefused += o.StaleWritesRefused
	g.GuardErrors += o.GuardErrors
}

// Safety is what a cell's safety checks found, each figure derived once:
// the overlap checker's counts, the guarded writes, and the
// linearizability check of the recorded history.
type Safety struct {
	// Overlaps are grants of one lock that overlapped another client's as
	// the clients saw them; TokenRegressions are fencing tokens that did
	// not grow with grant order (duplicates included).
	Overlaps         int64 `json:"overlaps"`
	TokenRegressions int64 `json:"token_regressions"`
	// Guarded says whether the cell wrote to guarded resources at all;
	// GuardCounts is what they saw.
	Guarded bool `json:"guarded"`
	GuardCounts
	// GuardNote says why a cell that asked for the guarded register ran
	// without one (its servers keep none), when it did.
	GuardNote string `json:"guard_note,omitempty"`
	// Tokens says where the tokens checked came from.
	Tokens TokenSource `json:"tokens"`

	// Linearizable is the verdict on the recorded history; empty when no
	// history was recorded.
	Linearizable Verdict `json:"linearizable,omitempty"`
	// Ops is how many operations were checked, Unknown how many of them
	// had an unknown outcome, Dropped how many came after a client's log
	// was full (the check stops where the first full log did).
	Ops     int64 `json:"ops"`
	Unknown int64 `json:"unknown_ops"`
	Dropped int64 `json:"dropped_ops,omitempty"`
	// Windows is how many independent pieces the history was cut into.
	Windows int `json:"windows"`
	// LeaseExpiries counts grants whose lease ended while their holder
	// still held the lock by its own account (it learnt so at release, or
	// its library told it its session ended) and another client was
	// granted the lock meanwhile: what a TTL or a session does to a
	// stalled holder — or a failover that lost the key — not a fault of
	// the model. The overlap checker counts the same grants as overlaps.
	LeaseExpiries int64 `json:"lease_expiries"`
	// CheckMs is how long the check took, CheckAllocMB what it allocated.
	CheckMs      float64 `json:"check_ms"`
	CheckAllocMB float64 `json:"check_alloc_mb"`
	// Illegal is the shortest window of the history the check could not
	// linearize, when it found one.
	Illegal *IllegalWindow `json:"illegal,omitempty"`
}

// IllegalWindow names a stretch of one lock's history that no order of
// its operations explains: the lock, when (seconds after the cell
// started), how many operations, and the first one no linearization could
// take.
type IllegalWindow struct {
	Lock    string  `json:"lock"`
	Phase   int     `json:"phase"`
	FromS   float64 `json:"from_s"`
	ToS     float64 `json:"to_s"`
	Ops     int     `json:"ops"`
	Clients []int   `json:"clients"`
	// Stuck is the first operation no partial linearization could take,
	// e.g. "client 0 try → held".
	Stuck string `json:"stuck,omitempty"`
	// File is the visualization written beside the report, if any.
	File string `json:"file,omitempty"`
}

// UsersLost is the lost updates of the guarded counter the lock's users
// would write: the fenced one where the lock hands out its own tokens,
// the unfenced one otherwise (a post-grant counter's tokens only show
// what fencing would do).
func (s *Safety) UsersLost() int64 {
	if s == nil {
		return 0
	}
	if s.Tokens == TokensLock {
		return s.LostUpdatesFenced
	}
	return s.LostUpdates
}

// KeepGuard copies the guarded register's figures from o into s: the
// linearizability check returns a Safety of its own, which knows nothing
// of the register.
func (s *Safety) KeepGuard(o *Safety) {
	s.Guarded, s.GuardNote, s.GuardCounts = o.Guarded, o.GuardNote, o.GuardCounts
}

// verdictRank orders verdicts from the best to the worst.
var verdictRank = map[Verdict]int{"": 0, Linearizable: 1, NotChecked: 2, VerdictUnknown: 3, NotLinearizable: 4}

// Add returns s with o's figures added (repeats of one cell, or its
// shards): counts and checking time summed, the worse verdict, the first
// illegal window. Every count adds without loss — the guarded register's
// lost updates too, taken per write — but a shard's verdict is on its own
// clients' operations alone.
func (s *Safety) Add(o *Safety) *Safety {
	if o == nil {
		return s
	}
	if s == nil {
		c := *o
		return &c
	}
	out := *s
	out.Overlaps += o.Overlaps
	out.TokenRegressions += o.TokenRegressions
	out.Guarded = out.Guarded || o.Guarded
	out.GuardCounts.Add(o.GuardCounts)
	if out.GuardNote == "" {
		out.GuardNote = o.GuardNote
	}
	out.Ops += o.Ops
	out.Unknown += o.Unknown
	out.Dropped += o.Dropped
	out.Windows += o.Windows
	out.LeaseExpiries += o.LeaseExpiries
	out.CheckMs += o.CheckMs
	out.CheckAllocMB += o.CheckAllocMB
	if verdictRank[o.Linearizable] > verdictRank[out.Linearizable] {
		out.Linearizable = o.Linearizable
	}
	if out.Illegal == nil {
		out.Illegal = o.Illegal
	}
	return &out
}

// Append adds o's operations to h as phase phase: repeats of a cell use
// the same lock names on namespaces of their own, and must not be joined.
func (h *History) Append(o *History, phase uint16) *History {
	if o == nil {
		return h
	}
	if h == nil {
		h = &History{Start: o.Start, Names: o.Names, Expiring: o.Expiring}
	}
	for _, op := range o.Ops {
		if o.Until != 0 && op.Call > o.Until {
			continue
		}
		op.Phase = phase
		h.Ops = append(h.Ops, op)
	}
	h.Dropped += o.Dropped
	return h
}
