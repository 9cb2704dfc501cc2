package engine

import (
	"fmt"
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

// progress is when the lock last changed hands, and how many hold it.
type progress struct {
	last    atomic.Int64 // ns since the cell's start: the last grant or release
	holding atomic.Int64
	start   time.Time
}

func (p *progress) granted(t time.Time) {
	p.holding.Add(1)
	p.last.Store(int64(t.Sub(p.start)))
}

func (p *progress) released(t time.Time) {
	p.holding.Add(-1)
	p.last.Store(int64(t.Sub(p.start)))
}

// watchLivelock ends the cell with the livelock finding when there has
// been no progress for the limit; stop ends the watch.
func (r *cellRun) watchLivelock() (stop func()) {
	if r.spec.Shard != nil {
		return func() {}
	}
	lease, _ := r.driver.Caps.Lease(r.spec.Config)
	if lease <= 0 {
		lease = r.spec.Config.TTL
	}
	limit := livelockLimit(r.spec.Config.Retry, lease)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(max(limit/20, 10*time.Millisecond))
		defer tick.Stop()
		errs := int64(-1)
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				if e := r.unreachableCount(); e != errs || r.live.holding.Load() > 0 || !r.anyTrying() {
					errs = e
					r.live.last.Store(int64(now.Sub(r.start)))
					continue
				}
				if now.Sub(r.start)-time.Duration(r.live.last.Load()) >= limit {
					r.livelock = &result.Livelock{LimitS: limit.Seconds(), AtS: now.Sub(r.start).Seconds()}
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

func (r *cellRun) unreachableCount() int64 {
	var n int64
	for _, w := range r.workers {
		n += w.unreachable.Load()
	}
	return n
}

func (r *cellRun) anyTrying() bool {
	for _, w := range r.workers {
		if w.trying.Load() {
			return true
		}
	}
	return false
}

// livelockFinding fills in the cell's livelock figures from its counts.
func (r *cellRun) livelockFinding(c *result.Cell) {
	if r.livelock == nil {
		return
	}
	l := *r.livelock
	l.Attempts, l.SplitVotes, l.Errors = c.Retries, c.SplitVotes, c.Errors
	c.Finding, c.Livelock = result.FindingLivelock, &l
	c.Verdict = fmt.Sprintf("LIVELOCK: no grant for %v while clients kept trying (limit max(%d×retry, %d×lease)); the cell ended %.1fs in: %d attempts did not get the lock, %d of them split votes (some but not a majority of votes); %d errors",
		time.Duration(l.LimitS*float64(time.Second)).Round(time.Millisecond), LivelockRetries, LivelockTTLs, l.AtS, l.Attempts, l.SplitVotes, l.Errors)
}
