// Package exclusion is lockbench's one mutual-exclusion checker: fed live
// by a cell's clients, or after the fact with the grants every shard saw.
package exclusion

import (
	"cmp"
	"github.com/lockbench/lockbench/result"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Checker is lockbench's one mutual-exclusion checker. It is fed two ways
// and counts both into one list:
//
//   - live, by a cell's clients as they are granted a lock and release it
//     (Enter, Exit): atomics only, so it sits on the recording path without
//     locking or allocating; a violation (rare) takes a mutex to be listed;
//   - after the fact, with grants (Check): a fault scenario's holdings, or
//     every shard's grants of a sharded cell, ordered per lock by fencing
//     token where every grant has one and by wall clock otherwise, each
//     source with the bound of its clock's skew.
//
// At most one client may hold a lock at a time, and fencing tokens must
// grow in grant order.
type Checker struct {
	start time.Time
	name  func(lock int) string
	locks []lockState // dense: one per lock, up to denseLocks
	// sparse holds the state of the locks used, by index, for cells of
	// more than denseLocks: a million locks cost what is touched.
	sparse sync.Map

	count atomic.Int64
	// overlaps and tokens count the violations by kind: two holders, and
	// tokens out of order (regressions and duplicates).
	overlaps, tokens atomic.Int64
	mu               sync.Mutex
	kept             []result.Violation
	// possible counts overlaps of grants from two sources no longer than
	// their clocks' skew bounds: not proof of a violation, nor of safety.
	possible int64
}

type lockState struct {
	inside   atomic.Int32
	holder   atomic.Int64  // last client to enter
	since    atomic.Int64  // ns after start of that entry
	lastExit atomic.Int64  // ns after start of the last exit
	token    atomic.Uint64 // highest fencing token seen + 1; 0: none yet
	// released is when the last Release returned; granted when the last
	// acquire returned (ns after start): the two ends of a hand-off.
	released atomic.Int64
	granted  atomic.Int64
	_        [8]byte // keep neighbouring locks off one cache line
}

// denseLocks is the most locks whose state the checker keeps in one array
// (64 bytes each); beyond, it keeps the state of the locks used.
const denseLocks = 1 << 16

// NewChecker returns a checker of a cell that started at start, over locks
// locks named by name (which runs only when a violation is listed).
func NewChecker(start time.Time, locks int, name func(lock int) string) *Checker {
	k := &Checker{start: start, name: name}
	if locks <= denseLocks {
		k.locks = make([]lockState, locks)
	}
	return k
}

// state is lock's state. Dense, it is an index; sparse, a lookup that
// allocates the first time a lock is used.
func (k *Checker) state(lock int) *lockState {
	if k.locks != nil {
		return &k.locks[lock]
	}
	if v, ok := k.sparse.Load(lock); ok {
		return v.(*lockState)
	}
	v, _ := k.sparse.LoadOrStore(lock, new(lockState))
	return v.(*lockState)
}

// Visit is what a client carries from Enter to Exit.
type Visit struct {
	lock     int
	enteredN int64
	intruded bool // someone else was inside when we entered
	other    int
}

// Enter notes that client was granted lock at now, with its fencing token
// when fenced.
func (k *Checker) Enter(lock, client int, token uint64, fenced bool, now time.Time) Visit {
	s := k.state(lock)
	n := now.Sub(k.start).Nanoseconds()
	v := Visit{lock: lock, enteredN: n}
	prevHolder := int(s.holder.Swap(int64(client)))
	if s.inside.Add(1) > 1 {
		v.intruded, v.other = true, prevHolder
	}
	s.since.Store(n)
	if fenced {
		for {
			prev := s.token.Load()
			if prev != 0 && token < prev { // token ≤ highest seen
				k.Record(result.Violation{Lock: k.name(lock), Kind: "token_regression", Intruder: client,
					Holder: prevHolder, AtS: float64(n) / 1e9, Token: token, PrevToken: prev - 1})
				break
			}
			if s.token.CompareAndSwap(prev, token+1) {
				break
			}
		}
	}
	return v
}

// Exit notes that the client of v stopped holding its lock at now.
func (k *Checker) Exit(v Visit, client int, now time.Time) {
	s := k.state(v.lock)
	n := now.Sub(k.start).Nanoseconds()
	stillOther := s.inside.Add(-1) > 0
	if v.intruded {
		end := n
		if !stillOther {
			end = min(n, max(s.lastExit.Load(), v.enteredN))
		}
		k.Record(result.Violation{Lock: k.name(v.lock), Kind: "overlap", Holder: v.other, Intruder: client,
			AtS: float64(v.enteredN) / 1e9, OverlapUs: float64(end-v.enteredN) / 1e3})
	}
	s.lastExit.Store(n)
}

// Record counts a violation and lists it while fewer than
// result.MaxViolationsKept are.
func (k *Checker) Record(v result.Violation) {
	k.count.Add(1)
	switch v.Kind {
	case "overlap":
		k.overlaps.Add(1)
	case "token_regression", "token_duplicate":
		k.tokens.Add(1)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.kept) < result.MaxViolationsKept {
		k.kept = append(k.kept, v)
	}
}

// Violations returns how many violations were seen and those listed.
func (k *Checker) Violations() (int64, []result.Violation) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.count.Load(), append([]result.Violation(nil), k.kept...)
}

// Kinds returns how many of the violations were overlaps of two holders
// and how many fencing tokens out of order.
func (k *Checker) Kinds() (overlaps, tokens int64) { return k.overlaps.Load(), k.tokens.Load() }

// PossibleOverlaps is how many overlaps Check found within the sources'
// skew bounds.
func (k *Checker) PossibleOverlaps() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.possible
}

// Released notes that the holder of lock called Release at now. The call,
// not its return, is stamped: the next holder's grant may come back before
// the releaser hears its reply, and a stamp taken then would pair the next
// hand-off with this release.
func (k *Checker) Released(lock int, now time.Time) {
	k.state(lock).released.Store(now.Sub(k.start).Nanoseconds())
}

// Handoff returns the gap from the previous holder's release call to this
// acquire returning, when this client was already waiting at that release.
// It declines (ok false) when the client came to a free lock.
func (k *Checker) Handoff(lock int, start, got time.Time) (gap time.Duration, ok bool) {
	s := k.state(lock)
	g := got.Sub(k.start).Nanoseconds()
	prevGrant := s.granted.Swap(g)
	rel := s.released.Load()
	st := start.Sub(k.start).Nanoseconds()
	if rel == 0 || rel <= prevGrant || st >= rel || g < rel {
		return 0, false
	}
	return time.Duration(g - rel), true
}

// SourcedGrant is a grant with the source that saw it (a shard), its
// times already on the common clock.
type SourcedGrant struct {
	result.Grant
	Source int
}

// Check checks grants after the fact, per lock: in fencing-token order
// where every grant of the lock has a token, in wall-clock order otherwise.
// Two grants of one source compare exactly (one clock); of two sources, an
// overlap no longer than the sum of their skew bounds (bound, ns, by
// source; nil for none) is only possible, and counted apart. It returns
// how the grants were ordered: "fencing token" when any lock was.
func (k *Checker) Check(gs []SourcedGrant, bound []int64) string {
	by := map[int32][]SourcedGrant{}
	for _, g := range gs {
		by[g.Lock] = append(by[g.Lock], g)
	}
	locks := make([]int32, 0, len(by))
	for l := range by {
		locks = append(locks, l)
	}
	slices.Sort(locks)
	order := "wall clock"
	for _, l := range locks {
		lg := by[l]
		fenced := !slices.ContainsFunc(lg, func(g SourcedGrant) bool { return !g.Fenced })
		if fenced {
			order = "fencing token"
			slices.SortFunc(lg, func(a, b SourcedGrant) int {
				return cmp.Or(cmp.Compare(a.Token, b.Token), cmp.Compare(a.Enter, b.Enter))
			})
		} else {
			slices.SortFunc(lg, func(a, b SourcedGrant) int { return cmp.Compare(a.Enter, b.Enter) })
		}
		k.scan(lg, fenced, bound)
	}
	return order
}

// scan walks one lock's ordered grants against the latest exit so far: a
// grant entering before it overlaps the holder of that exit.
func (k *Checker) scan(gs []SourcedGrant, fenced bool, bound []int64) {
	skew := func(src int) int64 {
		if src < len(bound) {
			return bound[src]
		}
		return 0
	}
	lock := k.name(int(gs[0].Lock))
	var last SourcedGrant // the grant with the latest exit so far
	for i, g := range gs {
		if i > 0 {
			slack := int64(0)
			if g.Source != last.Source {
				slack = skew(g.Source) + skew(last.Source)
			}
			v := result.Violation{Lock: lock, Holder: int(last.Client), Intruder: int(g.Client),
				Token: g.Token, PrevToken: last.Token, AtS: k.at(g.Enter)}
			prev := gs[i-1]
			switch over := last.Exit - g.Enter; {
			case fenced && g.Token == prev.Token:
				v.Kind = "token_duplicate"
				k.Record(v)
			case fenced && g.Enter+slack < prev.Enter:
				v.Kind, v.Holder, v.PrevToken = "token_regression", int(prev.Client), prev.Token
				k.Record(v)
			case g.Client == last.Client && g.Source == last.Source:
				// One client's own holdings: no second holder.
			case over > slack:
				// Granted while another held it; both were inside until
				// the first of them left.
				v.Kind, v.OverlapUs = "overlap", float64(min(last.Exit, g.Exit)-g.Enter)/1e3
				k.Record(v)
			case over > 0:
				k.mu.Lock()
				k.possible++
				k.mu.Unlock()
			}
		}
		if i == 0 || g.Exit > last.Exit {
			last = g
		}
	}
}

// at is a grant's time (Unix ns) in seconds after the checker's start; 0
// for a checker with no start.
func (k *Checker) at(unixNs int64) float64 {
	if k.start.IsZero() {
		return 0
	}
	return float64(unixNs-k.start.UnixNano()) / 1e9
}

// Found is what the checker found, for a cell's accumulator.
func (k *Checker) Found() result.Checked {
	n, vs := k.Violations()
	o, t := k.Kinds()
	return result.Checked{Violations: n, Kept: vs, Possible: k.PossibleOverlaps(), Overlaps: o, TokenRegressions: t}
}
