package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/result"
)

// Livelock detection: clients keep trying, nobody is granted the lock. A
// thousand Redlock clients on one lock split the masters' votes so that no
// attempt wins a majority, each undoes its minority and tries again — the
// cell would wait out --max-cell-time having measured nothing. The cell
// ends instead with the finding "livelock" once there has been no grant
// for livelockLimit while clients were trying, nobody held the lock and no
// server was found unreachable (an outage is not a livelock; its errors
// say what it is). Other errors do not count as progress: clients whose
// every attempt times out on servers too busy to answer are busy without
// progress too, and a thousand Redlock clients mostly do that.

// Livelock limits: the wait is LivelockRetries retry delays — every
// client has had that many tries — and at least LivelockTTLs leases (the
// TTL; the session timeout for session leases), so that a grant left on a
// server by a crashed or cut-off attempt has expired in the meantime and
// cannot be what blocks everyone.
const (
	LivelockRetries = 20
	LivelockTTLs    = 2
)

// livelockLimit is max(20 × retry, 2 × lease).
func livelockLimit(retry, lease time.Duration) time.Duration {
	return max(LivelockRetries*retry, LivelockTTLs*lease)
}

// A sharded cell does not watch for a livelock: a shard sees only its own
// clients, and "nobody holds, everyone trying, no grant" is what a shard
// sees while another shard's client holds the lock for long. Such a cell
// runs its course (bounded by --max-cell-time), and its counts show what
// happened.

// progress counts grants and releases: how many hold the lock, and
// whether it changed hands since the watcher last looked. Counts, not
// times, so that a cycle pays two atomic adds and no clock reading; the
// watcher dates a change by the tick that saw it, so a livelock is found
// at most a tick late, never early.
type progress struct {
	grants, releases atomic.Int64
}

func (p *progress) granted()  { p.grants.Add(1) }
func (p *progress) released() { p.releases.Add(1) }

// changes is how many grants and releases there have been.
func (p *progress) changes() int64 { return p.releases.Load() + p.grants.Load() }

// holding is how many hold the lock; releases are read first, so that a
// grant or release between the two reads can only make it more.
func (p *progress) holding() int64 {
	r := p.releases.Load()
	return p.grants.Load() - r
}

// watchLivelock ends the cell with the livelock finding when there has
// been no progress for the limit; stop ends the watch.
func (r *Cell) watchLivelock() (stop func()) {
	if r.Spec.Shard != nil {
		return func() {}
	}
	lease, _ := r.Driver.LeaseBound(r.Spec.Config)
	if lease <= 0 {
		lease = r.Spec.Config.TTL
	}
	limit := livelockLimit(r.Spec.Config.Retry, lease)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(max(limit/20, 10*time.Millisecond))
		defer tick.Stop()
		errs, seen, last := int64(-1), int64(-1), r.start
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				n := r.live.changes()
				if e := r.unreachableCount(); e != errs || n != seen || r.live.holding() > 0 || !r.anyTrying() {
					errs, seen, last = e, n, now
					continue
				}
				if now.Sub(last) >= limit {
					r.livelock = &result.Livelock{LimitS: limit.Seconds(), AtS: now.Sub(r.start).Seconds(),
						LimitRetries: LivelockRetries, LimitLeases: LivelockTTLs}
					r.stop()
					r.wcancel()
					return
				}
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-finished }) }
}

func (r *Cell) unreachableCount() int64 {
	var n int64
	for _, w := range r.Clients {
		n += w.unreachable.Load()
	}
	return n
}

func (r *Cell) anyTrying() bool {
	for _, w := range r.Clients {
		if w.trying.Load() {
			return true
		}
	}
	return false
}

// livelockFinding fills in the cell's livelock figures from its counts.
func (r *Cell) livelockFinding(c *result.Cell) {
	if r.livelock == nil {
		return
	}
	l := *r.livelock
	l.Attempts, l.SplitVotes, l.Errors = c.Retries, c.SplitVotes, c.Errors
	c.Finding, c.Livelock = result.FindingLivelock, &l
}
