package scenarios

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/lockbench/lockbench/engine"
)

// schedule is the open loop's arrivals, shared by its clients in the
// manner of wrk2: a free client takes the next arrival and sends it at its
// intended time itself, so that no dispatcher's timer and no hand-off
// between goroutines stand between the intended and the actual send. An
// arrival that came due while no client was free to take it is settled by
// the next client to look (or by the runner as the cell ends): let in and
// queued if fewer than --max-inflight are in flight, dropped otherwise —
// what a dispatcher firing on time would have decided then.
type schedule struct {
	mu      sync.Mutex
	rng     *rand.Rand
	mean    time.Duration
	poisson bool
	n       int64
	next    time.Duration   // the next untaken arrival, after the cell's start
	queue   []time.Duration // let in while no client was free, oldest first
	head    int             // queue[head:] is still waiting
	done    bool            // no arrival is left to take
	ended   chan struct{}   // closed once done
}

func newSchedule(spec engine.CellSpec) *schedule {
	return &schedule{
		rng:     rand.New(rand.NewPCG(spec.Config.Seed, 0xa11ce)),
		mean:    time.Duration(float64(time.Second) / spec.Rate),
		poisson: spec.Arrival == engine.ArrivalPoisson,
		ended:   make(chan struct{}),
	}
}

// advance returns the next arrival's intended time, after the cell's
// start, unless the schedule has ended: at the cell's deadline, or once a
// counted cell's arrivals are all given out. Called with mu held.
func (o *openLoop) advance(r *engine.Cell) (time.Duration, bool) {
	s := o.sched
	if s.done {
		return 0, false
	}
	at := r.Start().Add(s.next)
	if dl := r.Deadline(); (!dl.IsZero() && !at.Before(dl)) || (!at.Before(r.MeasureFrom()) && !r.Spend()) {
		s.done = true
		close(s.ended)
		return 0, false
	}
	d := s.next
	s.n++
	if s.poisson {
		s.next += time.Duration(s.rng.ExpFloat64() * float64(s.mean))
	} else {
		s.next = time.Duration(float64(s.n) * float64(s.mean))
	}
	return d, true
}

// take gives a free client its next arrival: the oldest queued one,
// already let in (admitted), or else the next one on the schedule, to be
// sent at its intended time and let in then (see admit). ok is false when
// nothing is left. A caller that just served an arrival is still counted
// in flight for it: it was not free when the arrivals settled here came due.
func (o *openLoop) take(r *engine.Cell, now time.Time) (due time.Time, admitted, ok bool) {
	s := o.sched
	s.mu.Lock()
	defer s.mu.Unlock()
	o.settleLate(r, now)
	if s.head < len(s.queue) {
		d := s.queue[s.head]
		s.head++
		if s.head == len(s.queue) {
			s.queue, s.head = s.queue[:0], 0
		}
		return r.Start().Add(d), true, true
	}
	d, ok := o.advance(r)
	if ok {
		o.waiting.Add(1) // until admit, so that the cell waits for it
	}
	return r.Start().Add(d), false, ok
}

// settleLate decides every arrival whose intended time is past and that no
// client took: no client was free then, so it is let in (queued) if fewer
// than --max-inflight were in flight, or dropped. Called with mu held.
func (o *openLoop) settleLate(r *engine.Cell, now time.Time) {
	s := o.sched
	for !s.done && r.Start().Add(s.next).Before(now) {
		d, ok := o.advance(r)
		if !ok {
			return
		}
		measured := !r.Start().Add(d).Before(r.MeasureFrom())
		if measured {
			o.offered.Add(1)
		}
		if o.inflight.Load() >= int64(r.Spec.MaxInflight) {
			if measured {
				o.dropped.Add(1)
			}
			continue
		}
		o.inflight.Add(1)
		s.queue = append(s.queue, d)
	}
}

// admit lets in an arrival a client took ahead and waited for, at its
// intended time, unless --max-inflight are already in flight: then it is
// dropped and counted, never re-timed.
func (o *openLoop) admit(r *engine.Cell, due time.Time) bool {
	defer o.waiting.Add(-1)
	measured := !due.Before(r.MeasureFrom())
	if measured {
		o.offered.Add(1)
	}
	if o.inflight.Add(1) > int64(r.Spec.MaxInflight) {
		o.inflight.Add(-1)
		if measured {
			o.dropped.Add(1)
		}
		return false
	}
	return true
}

// endSchedule ends the schedule as the cell ends. At the deadline
// (settle true) what came due before it while every client was busy is
// settled first, so that none of it goes unaccounted; an interrupted cell
// offers nothing more.
func (o *openLoop) endSchedule(r *engine.Cell, settle bool) {
	s := o.sched
	s.mu.Lock()
	defer s.mu.Unlock()
	if settle {
		end := time.Now()
		if dl := r.Deadline(); !dl.IsZero() && dl.Before(end) {
			end = dl
		}
		o.settleLate(r, end)
	}
	if !s.done {
		s.done = true
		close(s.ended)
	}
}
