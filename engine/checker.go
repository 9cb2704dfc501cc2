package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/result"
)

// checker watches mutual exclusion per lock name: at most one client may be
// between acquire-returned and release-called, and fencing tokens must grow
// in grant order. Its enter and exit are atomics only, so it stays on the
// recording path without locking or allocating; a violation (rare) takes a
// mutex to be listed.
type checker struct {
	start time.Time
	locks []lockState // dense: one per lock, up to denseLocks
	// sparse holds the state of the locks used, by index, for cells of
	// more than denseLocks: a million locks cost what is touched.
	sparse sync.Map
	names  lockNames

	count atomic.Int64
	mu    sync.Mutex
	kept  []result.Violation
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

func newChecker(start time.Time, names lockNames) *checker {
	k := &checker{start: start, names: names}
	if names.len() <= denseLocks {
		k.locks = make([]lockState, names.len())
	}
	return k
}

// state is lock's state. Dense, it is an index; sparse, a lookup that
// allocates the first time a lock is used.
func (k *checker) state(lock int) *lockState {
	if k.locks != nil {
		return &k.locks[lock]
	}
	if v, ok := k.sparse.Load(lock); ok {
		return v.(*lockState)
	}
	v, _ := k.sparse.LoadOrStore(lock, new(lockState))
	return v.(*lockState)
}

// visit is what a client carries from enter to exit.
type visit struct {
	lock     int
	enteredN int64
	intruded bool // someone else was inside when we entered
	other    int
}

func (k *checker) enter(lock, client int, token uint64, fenced bool, now time.Time) visit {
	s := k.state(lock)
	n := now.Sub(k.start).Nanoseconds()
	v := visit{lock: lock, enteredN: n}
	prevHolder := int(s.holder.Swap(int64(client)))
	if s.inside.Add(1) > 1 {
		v.intruded, v.other = true, prevHolder
	}
	s.since.Store(n)
	if fenced {
		for {
			prev := s.token.Load()
			if prev != 0 && token < prev { // token ≤ highest seen
				k.record(result.Violation{Lock: k.names.at(lock), Kind: "token_regression", Intruder: client,
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

func (k *checker) exit(v visit, client int, now time.Time) {
	s := k.state(v.lock)
	n := now.Sub(k.start).Nanoseconds()
	stillOther := s.inside.Add(-1) > 0
	if v.intruded {
		end := n
		if !stillOther {
			end = min(n, max(s.lastExit.Load(), v.enteredN))
		}
		k.record(result.Violation{Lock: k.names.at(v.lock), Kind: "overlap", Holder: v.other, Intruder: client,
			AtS: float64(v.enteredN) / 1e9, OverlapUs: float64(end-v.enteredN) / 1e3})
	}
	s.lastExit.Store(n)
}

func (k *checker) record(v result.Violation) {
	k.count.Add(1)
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.kept) < result.MaxViolationsKept {
		k.kept = append(k.kept, v)
	}
}

func (k *checker) violations() (int64, []result.Violation) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.count.Load(), append([]result.Violation(nil), k.kept...)
}

// released notes that the holder of lock called Release at now. The call,
// not its return, is stamped: the next holder's grant may come back before
// the releaser hears its reply, and a stamp taken then would pair the next
// hand-off with this release.
func (k *checker) released(lock int, now time.Time) {
	k.state(lock).released.Store(now.Sub(k.start).Nanoseconds())
}

// handoff returns the gap from the previous holder's release call to this
// acquire returning, when this client was already waiting at that release.
// It declines (ok false) when the client came to a free lock.
func (k *checker) handoff(lock int, start, got time.Time) (gap time.Duration, ok bool) {
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
