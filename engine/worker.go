package engine

import (
	"context"
	"errors"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/dist"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// Client is one simulated client: its own Locker, its own histograms and
// random stream. Only its goroutine records; what it records is merged when
// the second is over (see intervals), because hdrhistogram-go is not safe
// for concurrent use.
type Client struct {
	id      int
	l       impl.Locker
	settler impl.Settler // nil when the implementation cannot say
	trier   impl.Trier   // nil when it cannot try (see try)
	// counters is l.Counters(), which stays the same for l's life: read
	// three times a cycle, asked for once.
	counters *impl.Counters
	timer    *time.Timer
	rng      *rand.Rand
	// Picker, if a shape's Prepare sets it, draws each acquisition's lock
	// (the keys and rate scenarios).
	Picker *dist.Picker

	acquires atomic.Int64
	errors   atomic.Int64
	errClass map[string]int64 // written by the worker only, read after it ends
	done     atomic.Bool      // burst: granted, or gave up
	queued   atomic.Bool      // burst, polling: seen waiting at least once
	streak   int              // consecutive acquire errors, for back-off
	waited   bool             // the last Acquire took waitFlush or more
	live     liveHist

	// Giving up: after timeout (--acquire-timeout), or when leave is done
	// (the abandon scenario). The figures are the worker's own, read
	// after it ends, but abandons, which the progress line may read.
	timeout     time.Duration
	leave       context.Context
	abandons    atomic.Int64
	abandonRT   int64 // round trips of the acquisitions given up
	trying      atomic.Bool
	unreachable atomic.Int64 // errors that found a server unreachable
	renewals    int64
	renewLost   int64 // renewals that found the lock lost
	renewErrors int64
	renewHeld   time.Duration // holding time of leases renewed

	grantLog *grantLog // sharded cells: where grants go
	grantBuf *grantBatch
	hist     *result.OpLog // the operations the safety check reads
	lockName string        // the name lockIdx is the number of (lockOf)
	lockIdx  int32
	guard    *guardClient // the guarded register, with --guard

	t0    time.Time // the cell's start, for now
	fresh time.Time // see reading
	alarm *alarm    // open loop: waits for arrivals, nil for its timer

	iv      *intervals
	batch   *batch       // this interval's latencies, see intervals
	pending atomic.Int64 // batch's interval index, or noBatch
	ivIdx   int
	ivEnd   time.Time
}

func newWorker(id int, l impl.Locker, seed uint64) *Client {
	w := &Client{id: id, l: l, timer: time.NewTimer(time.Hour), t0: time.Now(),
		rng: rand.New(rand.NewPCG(seed, uint64(id)^0x9e3779b97f4a7c15))}
	w.timer.Stop()
	w.settler, _ = l.(impl.Settler)
	w.trier, _ = l.(impl.Trier) // asked once, not on every cycle
	w.counters = l.Counters()
	return w
}

// Reading is a clock reading for the start of an acquisition: the one
// taken as the last release returned, if nothing that takes time (a
// pause, a hand-on of latencies) came since, else a fresh one. Clock
// reads were a third of the harness's own time per cycle.
func (w *Client) Reading() time.Time {
	if t := w.fresh; !t.IsZero() {
		w.fresh = time.Time{}
		return t
	}
	return w.Now()
}

// Now is the time read from the monotonic clock alone, its wall reading
// derived from the cell's start: half the cost of time.Now, which reads
// the wall clock too — and on a virtual machine's clock a reading costs
// more than the rest of the harness's work per cycle.
func (w *Client) Now() time.Time { return w.t0.Add(time.Since(w.t0)) }

// record adds one latency to h, allocation-free (see impl.RecordMicros).
func record(h *hdrhistogram.Histogram, d time.Duration) { impl.RecordMicros(h, d) }

func (w *Client) recordAcquire(now time.Time, d time.Duration) {
	w.Record(TagAcquire, now, d)
	w.acquires.Add(1)
	w.live.add(d.Microseconds())
}

// waitFlush is how long a wait must be for the worker to hand on its
// latencies first: a worker that sleeps or waits for the lock with a
// batch in hand would keep its interval from closing (see intervals).
const waitFlush = time.Millisecond

// ReadyToWait hands on the worker's batch before an acquisition that will
// likely wait — its last one did — so that a waiting client holds no
// interval open; fast ones hand on once per interval. It runs before the
// acquisition's clock starts, so the hand-off is never measured.
func (w *Client) ReadyToWait() {
	if w.waited {
		w.Flush()
	}
}

// ErrAbandoned is what acquire returns for an acquisition the client gave
// up on: not an error of the lock, and counted apart.
var ErrAbandoned = errors.New("engine: acquisition given up")

// Acquire is w.l.Acquire from start (the caller's clock reading just
// before), returning when it returned and noting whether it had to wait
// (see readyToWait); reading the clock costs more than the rest of the
// harness per cycle, so each reading serves twice. The client gives up
// when its timeout passes or its leave context is done, before ctx ends:
// the driver sees its context cancelled, withdraws (deletes its queue
// node, undoes its SETs) and returns, and acquire returns ErrAbandoned,
// having recorded the wait and what it cost.
func (w *Client) Acquire(ctx context.Context, name string, start time.Time) (impl.Lease, time.Time, error) {
	actx := ctx
	var cancel context.CancelFunc
	switch {
	case w.leave != nil:
		actx, cancel = context.WithCancel(ctx)
		defer context.AfterFunc(w.leave, cancel)()
	case w.timeout > 0:
		actx, cancel = context.WithTimeout(ctx, w.timeout)
	}
	rt := w.counters.RoundTrips.Load()
	w.trying.Store(true)
	lock := w.lockOf(name)
	lease, call := w.try(actx, name, lock, start)
	var err error
	if lease == nil {
		lease, err = w.l.Acquire(actx, name)
	}
	w.trying.Store(false)
	now := w.Now()
	if !call.IsZero() {
		out := result.OutOK
		if err != nil {
			out = result.OutUnknown
		}
		w.recordOp(result.OpAcquire, lock, call, now, out, lease)
	}
	w.waited = now.Sub(start) >= waitFlush
	if err == nil {
		w.streak = 0
	}
	if cancel == nil {
		return lease, now, err
	}
	// Judged before cancel, which would make every error look given up.
	gaveUp := err != nil && actx.Err() != nil && ctx.Err() == nil
	cancel()
	if gaveUp {
		// Given up, as tryLock's caller does: no error happened, so no
		// back-off follows.
		w.streak = 0
		w.gaveUp(now, now.Sub(start), w.counters.RoundTrips.Load()-rt, !impl.IsWarmingUp(ctx))
		return nil, now, ErrAbandoned
	}
	return lease, now, err
}

// lockOf is lockIndex(name), kept for the name asked for last: a client
// asks for the same lock cycle after cycle, and parsing its name took
// about 80 instructions a cycle.
func (w *Client) lockOf(name string) int32 {
	if name != w.lockName || name == "" {
		w.lockName, w.lockIdx = name, lockIndex(name)
	}
	return w.lockIdx
}

// try asks a Locker that can try (impl.Trier) for the lock once before
// the acquire waits, and records what it answered. It returns the lease
// it got, or when the acquire that follows is called.
func (w *Client) try(ctx context.Context, name string, lock int32, start time.Time) (impl.Lease, time.Time) {
	if w.trier == nil {
		return nil, start
	}
	lease, err := w.trier.Try(ctx, name)
	now := w.Now()
	switch {
	case err == nil:
		w.recordOp(result.OpTry, lock, start, now, result.OutOK, lease)
		return lease, time.Time{}
	case errors.Is(err, impl.ErrHeld):
		w.recordOp(result.OpTry, lock, start, now, result.OutHeld, nil)
	default:
		w.recordOp(result.OpTry, lock, start, now, result.OutUnknown, nil)
	}
	return nil, now
}

// gaveUp counts an acquisition given up after waiting d, which sent rt
// requests.
func (w *Client) gaveUp(now time.Time, d time.Duration, rt int64, measured bool) {
	if !measured {
		return
	}
	w.abandons.Add(1)
	w.abandonRT += rt
	w.Record(TagAbandon, now, d)
}

// maxBackoff caps the pause after consecutive acquire errors.
const maxBackoff = time.Second

// Backoff pauses after an acquire error: the retry interval, doubled with
// each further error in a row up to maxBackoff, jittered. A client that
// hammered a failing or overloaded server at the retry interval would keep
// it overloaded (a thousand Redlock clients did, for ten minutes, with one
// acquisition); real clients back off, and so do these.
func (w *Client) Backoff(ctx context.Context, retry time.Duration) {
	d := retry << min(w.streak, 20)
	if d <= 0 || d > maxBackoff {
		d = maxBackoff
	}
	w.streak++
	w.Pause(ctx, d/2+time.Duration(w.rng.Int64N(int64(d/2)+1)))
}

func (w *Client) Fail(err error) {
	w.errors.Add(1)
	if errors.Is(err, impl.ErrUnreachable) {
		w.unreachable.Add(1)
	}
	if w.errClass == nil {
		w.errClass = map[string]int64{}
	}
	w.errClass[impl.Class(err)]++
}

// Pause sleeps d on the worker's timer or until ctx is done.
func (w *Client) Pause(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	w.fresh = time.Time{}
	if d >= waitFlush {
		w.Flush()
	}
	w.timer.Reset(d)
	select {
	case <-w.timer.C:
	case <-ctx.Done():
		w.timer.Stop()
	}
}

// Over reports whether the cell has ended. A client library may time out
// on the cell's deadline a moment before the context says so; an error then
// is the end of the cell, not a failure of the lock.
func (r *Cell) Over(ctx context.Context, now time.Time) bool {
	return ctx.Err() != nil || (!r.deadline.IsZero() && !now.Before(r.deadline))
}

// HoldAndRelease keeps the lock for a hold time, under the checker's eye,
// then releases it. A lost lease is counted by the implementation
// (Counters.Lost), not as an error.
func (r *Cell) HoldAndRelease(ctx context.Context, w *Client, lock int, lease impl.Lease, got time.Time, measured bool) {
	tok, fenced := lease.Fence()
	sessions := w.counters.SessionLost.Load()
	v := r.check.Enter(lock, w.id, tok, fenced, got)
	r.live.granted()
	if w.guard != nil {
		w.guard.read(r.relCtx, r.names.at(lock), GuardToken(lease))
	}
	r.hold(ctx, w, lock, lease, r.Spec.HoldDist.Sample(w.rng), measured)
	if r.BeforeRelease != nil {
		r.BeforeRelease(ctx)
	}
	if w.guard != nil {
		// Within the hold as the checker sees it: a write after Exit would
		// be another holder's business.
		w.guard.write(r.relCtx)
	}
	t := w.Now() // even with no hold: the hand-off gap and overlaps are measured from it
	r.check.Exit(v, w.id, t)
	w.addGrant(result.Grant{Enter: got.UnixNano(), Exit: t.UnixNano(), Token: tok, Fenced: fenced, Lock: int32(lock), Client: int32(w.id)})
	r.check.Released(lock, t)
	err := lease.Release(r.relCtx)
	now := w.Now()
	w.fresh = now
	out := outcome(err)
	if out == result.OutOK && w.counters.SessionLost.Load() != sessions {
		// The session ended under the holder, who was told so by its
		// client library, though the release answered ok (etcd's Unlock
		// deletes whatever is there): the grant ended before the release.
		out = result.OutLost
	}
	w.recordOp(result.OpRelease, int32(lock), t, now, out, nil)
	r.live.released()
	if measured {
		w.Record(TagRelease, now, now.Sub(t))
	}
	if err != nil && !errors.Is(err, impl.ErrLockLost) {
		w.Fail(err)
	}
}

// Granted records an acquisition: its latency, and the hand-off gap when
// this client was waiting as the previous holder released.
func (r *Cell) Granted(w *Client, lock int, start, got time.Time, latency time.Duration) {
	w.recordAcquire(got, latency)
	if gap, ok := r.check.Handoff(lock, start, got); ok {
		w.Record(TagHandoff, got, gap)
	}
}

// liveHist is a coarse latency histogram of atomics — four buckets per
// power of two — that the progress line may read while workers write. The
// exact figures come from the HdrHistograms at the end of the cell.
type liveHist struct{ b [4 * 64]atomic.Int64 }

func liveBucket(us int64) int {
	if us < 4 {
		return int(max(us, 0))
	}
	n := bits.Len64(uint64(us)) // us in [2^(n-1), 2^n)
	sub := (us >> (n - 3)) & 3  // next two bits
	return 4*(n-2) + int(sub)
}

func liveValue(i int) int64 {
	if i < 4 {
		return int64(i)
	}
	n := i/4 + 2
	sub := int64(i % 4)
	return (4 + sub + 1) << (n - 3) // upper edge of the bucket
}

func (h *liveHist) add(us int64) { h.b[liveBucket(us)].Add(1) }

// ID is the client's number in the cell, across shards.
func (w *Client) ID() int { return w.id }

// Rand is the client's own random stream.
func (w *Client) Rand() *rand.Rand { return w.rng }

// MarkDone says the client has got its one grant, or gave up (a queue's
// hand-off no longer waits for it).
func (w *Client) MarkDone() { w.done.Store(true) }

// IsDone reports whether MarkDone was called.
func (w *Client) IsDone() bool { return w.done.Load() }

// MarkQueued says a polling client has tried, so it is in the queue's
// fray.
func (w *Client) MarkQueued() { w.queued.Store(true) }

// SetLeave makes the client give up its waits once leave is done.
func (w *Client) SetLeave(leave context.Context) { w.leave = leave }

// ArmAlarm prepares the client to wait for arrivals at rate per second
// (see WaitUntil); disarm releases what that took.
func (w *Client) ArmAlarm(ctx context.Context, rate float64) (disarm func()) {
	if w.alarm = newAlarm(ctx, spinAllowance(rate)); w.alarm == nil {
		return func() {}
	}
	return func() { w.alarm.close(); w.alarm = nil }
}
