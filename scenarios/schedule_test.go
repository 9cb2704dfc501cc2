package scenarios

import (
	"github.com/lockbench/lockbench/engine"
	"testing"
	"time"
)

// scheduleRun is an open-loop cell with no clients, its clock
// started at t0 (1 s long unless spec says), for driving the schedule by hand.
func scheduleRun(t0 time.Time, spec engine.CellSpec) (*engine.Cell, *openLoop) {
	if spec.Duration == 0 {
		spec.Duration = time.Second
	}
	return engine.NewCell(spec, t0), &openLoop{sched: newSchedule(spec)}
}

// Arrivals that came due while every client was busy are settled as a
// dispatcher firing on time would have: let in while fewer than
// --max-inflight are in flight, queued and served oldest first, the rest
// dropped; the next free client then takes the next arrival ahead of time.
func TestScheduleSettlesWhatCameDueWhileClientsWereBusy(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	r, o := scheduleRun(t0, engine.CellSpec{Clients: 2, MaxInflight: 3, Rate: 1000})
	o.inflight.Store(2) // both clients busy, the caller among them

	due, admitted, ok := o.take(r, t0.Add(10*time.Millisecond+500*time.Microsecond))
	if !ok || !admitted || !due.Equal(t0) {
		t.Fatalf("first take: due %v admitted %v ok %v, want the arrival at 0 let in", due.Sub(t0), admitted, ok)
	}
	if o, d, in := o.offered.Load(), o.dropped.Load(), o.inflight.Load(); o != 11 || d != 10 || in != 3 {
		t.Fatalf("offered %d dropped %d in flight %d, want 11 offered (0…10ms), 10 dropped, 3 in flight", o, d, in)
	}
	o.inflight.Add(-1) // the caller's previous arrival is done
	due, admitted, ok = o.take(r, t0.Add(10*time.Millisecond+600*time.Microsecond))
	if !ok || admitted || !due.Equal(t0.Add(11*time.Millisecond)) || o.waiting.Load() != 1 {
		t.Fatalf("second take: due %v admitted %v ok %v waiting %d, want the arrival at 11ms taken ahead",
			due.Sub(t0), admitted, ok, o.waiting.Load())
	}
	if !o.admit(r, due) || o.offered.Load() != 12 || o.inflight.Load() != 3 || o.waiting.Load() != 0 {
		t.Fatalf("admit: offered %d in flight %d waiting %d", o.offered.Load(), o.inflight.Load(), o.waiting.Load())
	}
	// Full: the next arrival a client waited for is dropped, not re-timed.
	due, _, _ = o.take(r, t0.Add(11*time.Millisecond))
	if o.admit(r, due) || o.dropped.Load() != 11 || o.inflight.Load() != 3 {
		t.Fatalf("admit when full: dropped %d in flight %d", o.dropped.Load(), o.inflight.Load())
	}
}

// With room beyond the clients, arrivals that came due while all were busy
// queue up to --max-inflight; at the deadline the runner settles the rest,
// and nothing is given out after it.
func TestScheduleQueuesUpToMaxInflightAndEndsAtTheDeadline(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	r, o := scheduleRun(t0, engine.CellSpec{Clients: 1, MaxInflight: 4, Rate: 100})
	o.inflight.Store(1)
	o.endSchedule(r, false) // not yet: only a deadline settles
	r2, o2 := scheduleRun(t0, engine.CellSpec{Clients: 1, MaxInflight: 4, Rate: 100, Duration: 95 * time.Millisecond})
	o2.inflight.Store(1)
	o2.endSchedule(r2, true) // arrivals at 0, 10, … 90ms: 10
	if o, d, in := o2.offered.Load(), o2.dropped.Load(), o2.inflight.Load(); o != 10 || d != 7 || in != 4 {
		t.Fatalf("offered %d dropped %d in flight %d, want 10 offered, 3 queued, 7 dropped", o, d, in)
	}
	for i, want := range []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond} {
		due, admitted, ok := o2.take(r2, t0.Add(time.Second))
		if !ok || !admitted || due.Sub(t0) != want {
			t.Fatalf("queued %d: due %v admitted %v ok %v, want %v", i, due.Sub(t0), admitted, ok, want)
		}
	}
	if _, _, ok := o2.take(r2, t0.Add(time.Second)); ok {
		t.Fatal("an arrival given out after the schedule ended")
	}
	select {
	case <-o.sched.ended:
	default:
		t.Fatal("an interrupted schedule did not end")
	}
	if o.offered.Load() != 0 {
		t.Fatalf("an interrupted schedule offered %d", o.offered.Load())
	}
}
