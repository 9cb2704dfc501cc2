package capacity

import (
	"context"
	"reflect"
	"testing"
)

// scripted plays a list of outcomes, one per trial, in order.
type scripted struct {
	outs  []Outcome
	calls int
}

func (s *scripted) trial(context.Context, float64, Phase, bool) (Outcome, error) {
	o := s.outs[min(s.calls, len(s.outs)-1)]
	s.calls++
	return o, nil
}

func tailOf(over, n int64) Tail { return Tail{Over: over, Arrivals: n} }

// A trial that passed on a busy machine is unknown: failures there are
// set aside (Outcome.Limit), so counting its pass would tip the pool
// toward passing exactly when the machine is busy.
func TestPoolCountsABusyPassAsUnknown(t *testing.T) {
	t.Parallel()
	busy := "machine busy: other processes kept 1.2 of 2 cores busy"
	m := &scripted{outs: []Outcome{
		{Pass: true, Tail: tailOf(5, 1000), Busy: busy}, // 0.5 %: would pull the pool under 1 %
		{Tail: tailOf(15, 1000)},
		{Tail: tailOf(15, 1000)},
	}}
	s := &search{ctx: context.Background(), trial: m.trial, opt: Options{Allowed: 0.01}.withDefaults()}
	o, err := s.try(100, PhaseBisect, false)
	if err != nil || o.Pass {
		t.Fatalf("outcome %+v, err %v; want the pool of the two quiet trials to fail", o, err)
	}
	if len(s.ans.Steps) != 3 {
		t.Fatalf("%d steps, want 3", len(s.ans.Steps))
	}
	first, last := s.ans.Steps[0], s.ans.Steps[2]
	if !first.Unknown || first.Pass || first.Pool != 0 || first.PoolSize != 0 {
		t.Errorf("busy trial %+v: want unknown, not passing, counted in no pool", first)
	}
	if last.Pool != 2 || !reflect.DeepEqual(last.Pooled, tailOf(30, 2000)) || !last.Decided || last.PoolSize != 2 || !reflect.DeepEqual(last.Verdict, tailOf(30, 2000)) {
		t.Errorf("last step %+v: want 30 of 2,000 pooled from the two quiet trials, decided", last)
	}
	// Nor does a busy machine's tail count toward the capacity's range.
	a := Answer{Steps: s.ans.Steps}
	if lo, _ := a.decided(0.01); lo != 0 {
		t.Errorf("range's low end %g: the busy pass counted", lo)
	}

	// A pool of busy trials only says nothing of the lock: the search stops.
	m = &scripted{outs: []Outcome{{Pass: true, Tail: tailOf(5, 1000), Busy: busy}}}
	s = &search{ctx: context.Background(), trial: m.trial, opt: Options{Allowed: 0.01}.withDefaults()}
	if _, err := s.try(100, PhaseBisect, false); err != errStop || s.ans.Limit != busy || m.calls != 4 {
		t.Errorf("err %v, limit %q after %d trials; want the search stopped on the machine after 4", err, s.ans.Limit, m.calls)
	}
}

// A trial the machine failed, retried within a pool, is no part of the
// pool: a passing pool must not paint it passed.
func TestPoolVerdictSkipsARetriedLimitedTrial(t *testing.T) {
	t.Parallel()
	m := &scripted{outs: []Outcome{
		{Tail: tailOf(10, 1000)}, // 1 %: too close to call
		{Why: "late", Limit: "schedule lag p99 5ms: lockbench sent arrivals late"},
		{Pass: true, Tail: tailOf(0, 4000)},
	}}
	s := &search{ctx: context.Background(), trial: m.trial, opt: Options{Allowed: 0.01}.withDefaults()}
	o, err := s.try(100, PhaseBisect, false)
	if err != nil || !o.Pass || len(s.ans.Steps) != 3 {
		t.Fatalf("outcome %+v, err %v, %d steps; want a passing pool over 3 steps", o, err, len(s.ans.Steps))
	}
	for i, want := range []bool{true, false, true} {
		if st := s.ans.Steps[i]; st.Pass != want {
			t.Errorf("step %d (%+v) pass %v, want %v", i, st.Outcome, st.Pass, want)
		}
	}
	if st := s.ans.Steps[0]; st.PoolSize != 2 || !reflect.DeepEqual(st.Verdict, tailOf(10, 5000)) {
		t.Errorf("first step pool size %d, verdict %+v; want the 2 counted trials' 10 of 5,000", st.PoolSize, st.Verdict)
	}
}

// Once a full trial failed, no trial at or above its rate — short or
// full — makes the answer: short trials proved optimistic there, and a
// full one passing above a full failure is the noise of full trials.
func TestAnswerStaysBelowAFullFailure(t *testing.T) {
	t.Parallel()
	// Short trials pass up to 10,000/s, full ones up to 8,200/s, but a
	// full trial at 8,000/s fails (noise).
	m := &model{p99: knee(10000), full: func(r float64) float64 {
		if r == 8000 {
			return 11
		}
		return knee(8200)(r)
	}}
	a, err := Search(context.Background(), m.trial, Options{Start: 1000})
	if err != nil {
		t.Fatal(err)
	}
	lowest := 0.0
	for _, st := range a.Steps {
		if st.Full && !st.Pass && (lowest == 0 || st.Rate < lowest) {
			lowest = st.Rate
		}
	}
	if lowest == 0 || a.Rate >= lowest {
		t.Fatalf("answer %g, a full trial failed at %g; want the answer below it (steps %+v)", a.Rate, lowest, a.Steps)
	}
	if !a.Confirmed || a.Missed != lowest {
		t.Errorf("confirmed %v, missed %g; want confirmed by the full failure at %g", a.Confirmed, a.Missed, lowest)
	}

	// Short trials that start above the full capacity: the search comes
	// back down with full trials once a full one failed.
	m = &model{p99: knee(10000), full: knee(8000)}
	a, err = Search(context.Background(), m.trial, Options{Start: 9000, MaxRounds: 5})
	if err != nil {
		t.Fatal(err)
	}
	failed := false
	for _, st := range a.Steps {
		if failed && !st.Full {
			t.Errorf("a short trial at %g after a full one failed", st.Rate)
		}
		failed = failed || st.Full && !st.Pass
	}
	if !a.Confirmed || a.Rate > 8000 {
		t.Errorf("answer %+v, want a confirmed rate ≤ 8000", a)
	}
}

// A pool cut short by a failure besides the tail (errors, drops) failed:
// its earlier trials must not stay passing (passBelow would count them).
func TestPoolCutByAFailureBesidesTheTailFailsItsTrials(t *testing.T) {
	t.Parallel()
	m := &scripted{outs: []Outcome{
		{Pass: true, Tail: tailOf(9, 1000)}, // 0.9 %: too close to call
		{Why: "3 errors", Besides: "3 errors", Tail: tailOf(9, 1000)},
	}}
	s := &search{ctx: context.Background(), trial: m.trial, opt: Options{Allowed: 0.01}.withDefaults()}
	o, err := s.try(100, PhaseBisect, false)
	if err != nil || o.Pass || len(s.ans.Steps) != 2 {
		t.Fatalf("outcome %+v, err %v, %d steps; want a failure after 2", o, err, len(s.ans.Steps))
	}
	if s.ans.Steps[0].Pass || s.passBelow(101) != 0 {
		t.Errorf("first trial %+v still passing", s.ans.Steps[0])
	}
}
