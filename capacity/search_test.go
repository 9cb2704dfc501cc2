package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// model is a fake lock: its p99 at a rate is a function, so a search over
// it is deterministic. A trial passes when p99 ≤ 10 ms.
type model struct {
	p99 func(rate float64) float64 // ms
	// full, if set, is the p99 of a full trial instead (noise between
	// short and long trials).
	full  func(rate float64) float64
	limit float64 // rate at and above which lockbench itself falls behind; 0 none
	calls int
}

func (m *model) trial(_ context.Context, rate float64, _ Phase, full bool) (Outcome, error) {
	m.calls++
	if m.limit > 0 && rate >= m.limit {
		return Outcome{Why: "late", Limit: "schedule lag p99 5ms"}, nil
	}
	p := m.p99(rate)
	if full && m.full != nil {
		p = m.full(rate)
	}
	if p <= 10 {
		return Outcome{Pass: true}, nil
	}
	return Outcome{Why: fmt.Sprintf("p99 %.1fms > 10ms", p)}, nil
}

// knee is a queue-like lock whose p99 passes 10 ms at exactly capacity.
func knee(capacity float64) func(float64) float64 {
	return func(r float64) float64 { return 10 * r / capacity }
}

func TestSearchBracketsBisectsAndConfirms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		capacity  float64
		start     float64
		precision float64
	}{
		{"grows from below", 12400, 100, 0.05},
		{"shrinks from above", 730, 100000, 0.05},
		{"fine precision", 5000, 100, 0.01},
		{"coarse precision", 5000, 100, 0.2},
		{"capacity at start", 100, 100, 0.05},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := &model{p99: knee(tc.capacity)}
			a, err := Search(context.Background(), m.trial, Options{Start: tc.start, Precision: tc.precision})
			if err != nil {
				t.Fatal(err)
			}
			if !a.Confirmed {
				t.Fatalf("not confirmed: %+v", a)
			}
			if a.Rate > tc.capacity || a.Rate < tc.capacity*(1-tc.precision) {
				t.Errorf("answer %.1f, want within %.0f%% below %.0f", a.Rate, 100*tc.precision, tc.capacity)
			}
			if a.Missed <= tc.capacity || math.Abs(a.Missed/a.Rate-(1+tc.precision)) > 1e-9 {
				t.Errorf("missed %.1f, want one step (%.0f%%) above the answer %.1f", a.Missed, 100*tc.precision, a.Rate)
			}
			// The last two trials are the full confirmations: pass, then fail.
			n := len(a.Steps)
			last, prev := a.Steps[n-1], a.Steps[n-2]
			if !prev.Full || !prev.Pass || prev.Rate != a.Rate || !last.Full || last.Pass || last.Phase != PhaseConfirm {
				t.Errorf("confirmation steps %+v, %+v", prev, last)
			}
			for _, st := range a.Steps[:n-2] {
				if st.Full { // short and full trials agree here: no reopening
					t.Errorf("a full trial before confirming: %+v", st)
				}
			}
			if n != m.calls {
				t.Errorf("%d steps listed, %d trials run", n, m.calls)
			}
		})
	}
}

func TestSearchBisectionsFollowPrecision(t *testing.T) {
	t.Parallel()
	count := func(p float64) int {
		m := &model{p99: knee(10000)}
		a, err := Search(context.Background(), m.trial, Options{Start: 1000, Precision: p})
		if err != nil || !a.Confirmed {
			t.Fatal(err, a)
		}
		n := 0
		for _, st := range a.Steps {
			if st.Phase == PhaseBisect {
				n++
			}
		}
		return n
	}
	// The bracket [8000, 16000] is 100% wide: halving it to 20% takes 3
	// bisections, to 1% takes 7.
	if c, f := count(0.2), count(0.01); c >= f || f-c < 3 {
		t.Errorf("bisections: %d at 20%%, %d at 1%%; want clearly more at the finer precision", c, f)
	}
}

func TestSearchReopensWhenConfirmationDisagrees(t *testing.T) {
	t.Parallel()
	// Short trials are optimistic: a full trial passes only up to 8000.
	m := &model{p99: knee(10000), full: knee(8000)}
	a, err := Search(context.Background(), m.trial, Options{Start: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Confirmed || a.Rate > 8000 {
		t.Fatalf("answer %+v, want a confirmed rate ≤ 8000", a)
	}
	fullFails := 0
	for _, st := range a.Steps {
		if st.Full && !st.Pass && st.Rate <= 10000 && st.Rate != a.Missed {
			fullFails++
		}
	}
	if fullFails == 0 {
		t.Errorf("no failed confirmation reopened the search: %+v", a.Steps)
	}
}

func TestSearchStopsAtLockbenchsOwnLimit(t *testing.T) {
	t.Parallel()
	m := &model{p99: knee(1e9), limit: 3000}
	a, err := Search(context.Background(), m.trial, Options{Start: 100})
	if err != nil {
		t.Fatal(err)
	}
	if a.Confirmed || a.Limit == "" || a.Rate != 1600 {
		t.Fatalf("answer %+v, want unconfirmed at 1600/s with the limit named", a)
	}
	n := len(a.Steps)
	if last, prev := a.Steps[n-1], a.Steps[n-2]; last.Rate != 3200 || last.Limit == "" || prev.Rate != 3200 || prev.Limit == "" {
		t.Errorf("last trials %+v, %+v; want two at 3200/s that hit the limit", prev, last)
	}
}

func TestSearchRetriesOneLimitedTrial(t *testing.T) {
	t.Parallel()
	m := &model{p99: knee(5000)}
	blip := true
	trial := func(ctx context.Context, r float64, ph Phase, full bool) (Outcome, error) {
		if r == 1600 && blip {
			blip = false
			return Outcome{Limit: "schedule lag"}, nil
		}
		return m.trial(ctx, r, ph, full)
	}
	a, err := Search(context.Background(), trial, Options{Start: 100})
	if err != nil || !a.Confirmed || a.Limit != "" {
		t.Fatalf("err %v, answer %+v; want the blip retried and the search confirmed", err, a)
	}
}

func TestSearchWithNoPassingRate(t *testing.T) {
	t.Parallel()
	m := &model{p99: func(float64) float64 { return 50 }}
	a, err := Search(context.Background(), m.trial, Options{Start: 100, Min: 10})
	if err != nil {
		t.Fatal(err)
	}
	if a.Rate != 0 || a.Confirmed || a.Note == "" {
		t.Fatalf("answer %+v, want none, with a note", a)
	}
	if m.calls != 4 { // 100, 50, 25, 12.5; 6.25 is below Min
		t.Errorf("%d trials, want 4", m.calls)
	}
}

func TestSearchIsBounded(t *testing.T) {
	t.Parallel()
	m := &model{p99: func(float64) float64 { return 1 }} // everything passes
	a, err := Search(context.Background(), m.trial, Options{Start: 1, Max: 1e12, MaxTrials: 7})
	if err != nil {
		t.Fatal(err)
	}
	if m.calls != 7 || a.Confirmed || a.Note == "" {
		t.Fatalf("%d trials, answer %+v; want 7 trials and a note", m.calls, a)
	}
	m = &model{p99: func(float64) float64 { return 1 }}
	a, _ = Search(context.Background(), m.trial, Options{Start: 100, Max: 1000})
	if a.Rate != 1000 || a.Confirmed {
		t.Errorf("answer %+v, want the highest allowed rate, unconfirmed", a)
	}
}

func TestSearchEndsOnError(t *testing.T) {
	t.Parallel()
	boom := errors.New("server died")
	n := 0
	trial := func(context.Context, float64, Phase, bool) (Outcome, error) {
		n++
		if n == 3 {
			return Outcome{}, boom
		}
		return Outcome{Pass: true}, nil
	}
	a, err := Search(context.Background(), trial, Options{})
	if !errors.Is(err, boom) || len(a.Steps) != 2 || a.Rate != 200 {
		t.Fatalf("err %v, answer %+v; want the error after two passing trials", err, a)
	}
}

// tailModel is a lock whose share of arrivals over the limit grows with
// the rate (share(rate)); every trial serves n arrivals and has exactly
// its share of them over, so pooling is deterministic.
type tailModel struct {
	share   func(rate float64) float64
	n       int64
	besides func(rate float64) string // a failure other than the tail
	calls   int
}

func (m *tailModel) trial(_ context.Context, rate float64, _ Phase, _ bool) (Outcome, error) {
	m.calls++
	t := Tail{Over: int64(math.Round(m.share(rate) * float64(m.n))), Arrivals: m.n}
	o := Outcome{Tail: t, Pass: t.Share() <= 0.01}
	if m.besides != nil {
		o.Besides = m.besides(rate)
	}
	if o.Besides != "" {
		o.Pass = false
	}
	return o, nil
}

func TestSearchPoolsATailTooCloseToCall(t *testing.T) {
	t.Parallel()
	// 1.5 % over: 15 of 1,000 cannot be told from 1 %, 30 of 2,000 can.
	m := &tailModel{share: func(float64) float64 { return 0.015 }, n: 1000}
	var told []Step
	s := &search{ctx: context.Background(), trial: m.trial,
		opt: Options{Allowed: 0.01, Report: func(st Step) { told = append(told, st) }}.withDefaults()}
	o, err := s.try(100, PhaseBisect, false)
	if err != nil || o.Pass {
		t.Fatalf("outcome %+v, err %v; want a failure", o, err)
	}
	if len(s.ans.Steps) != 2 || m.calls != 2 {
		t.Fatalf("%d steps, %d trials; want 2 pooled", len(s.ans.Steps), m.calls)
	}
	first, second := s.ans.Steps[0], s.ans.Steps[1]
	if first.Pool != 1 || first.Decided || first.Pooled.Over != 15 || first.Pooled.Arrivals != 1000 {
		t.Errorf("first trial %+v, want undecided alone", first)
	}
	if second.Pool != 2 || !second.Decided || second.Pooled.Over != 30 || second.Pooled.Arrivals != 2000 || second.Pass {
		t.Errorf("second trial %+v, want the pool of 2,000 decided against", second)
	}
	if len(told) != 2 || !reflect.DeepEqual(told[1].Pooled, second.Pooled) {
		t.Errorf("reported %+v, want each trial once, with its pool", told)
	}

	// 1.05 % never decides within the bound (4,000 arrivals at 1 %): the
	// point estimate judges, and the step says it did not decide.
	m = &tailModel{share: func(float64) float64 { return 0.0105 }, n: 1000}
	s = &search{ctx: context.Background(), trial: m.trial, opt: Options{Allowed: 0.01}.withDefaults()}
	o, _ = s.try(100, PhaseBisect, false)
	last := s.ans.Steps[len(s.ans.Steps)-1]
	if m.calls != 4 || o.Pass || last.Decided || last.Pooled.Arrivals != 4000 {
		t.Errorf("%d trials, last %+v; want 4 pooled to 4,000, undecided, failed", m.calls, last)
	}

	// A rate so low that its trials hold 100 arrivals each pools 4 trials,
	// not the 40 that 4,000 arrivals would take.
	m = &tailModel{share: func(float64) float64 { return 0.01 }, n: 100}
	s = &search{ctx: context.Background(), trial: m.trial, opt: Options{Allowed: 0.01}.withDefaults()}
	if s.try(1, PhaseBisect, false); m.calls != 4 {
		t.Errorf("%d trials pooled at a low rate, want 4", m.calls)
	}

	// A failure besides the tail (errors, drops) is not pooled away.
	m = &tailModel{share: func(float64) float64 { return 0.0095 }, n: 1000,
		besides: func(float64) string { return "3 errors" }}
	s = &search{ctx: context.Background(), trial: m.trial, opt: Options{Allowed: 0.01}.withDefaults()}
	if o, _ = s.try(100, PhaseBisect, false); o.Pass || m.calls != 1 {
		t.Errorf("outcome %+v after %d trials, want one failed trial", o, m.calls)
	}
}

func TestSearchBoundsTheCapacityByDecidedTails(t *testing.T) {
	t.Parallel()
	// A polling lock: the share over grows in proportion to the rate, 1 %
	// at 100/s. 1,000 arrivals a trial cannot decide near it.
	m := &tailModel{share: func(r float64) float64 { return 0.01 * r / 100 }, n: 1000}
	a, err := Search(context.Background(), m.trial, Options{Start: 500, Precision: 0.05, Allowed: 0.01, MaxTrials: 200})
	if err != nil {
		t.Fatal(err)
	}
	if a.Low <= 0 || a.High <= 0 || a.Low > 100 || a.High < 100 {
		t.Fatalf("range [%g, %g], want it to hold the capacity 100/s", a.Low, a.High)
	}
	if a.Low > a.Rate || (a.Missed > 0 && a.High < a.Missed) {
		t.Errorf("range [%g, %g] does not hold the answer %g (missed %g)", a.Low, a.High, a.Rate, a.Missed)
	}
	for _, st := range a.Steps {
		if st.Rate > a.Low && st.Rate < a.High && st.Decided {
			t.Errorf("step at %g decided, inside the range [%g, %g]", st.Rate, a.Low, a.High)
		}
	}
	t.Logf("1,000 arrivals: %g [%g, %g] in %d trials, sampled %v", a.Rate, a.Low, a.High, len(a.Steps), a.Sampled)
	// Bisection ended between two rates neither of whose tails could
	// decide: the answer is sampled, unconfirmed, and says so.
	if !a.Sampled || a.Confirmed || !strings.Contains(a.Note, "too close to call") {
		t.Errorf("sampled %v, confirmed %v, note %q; want a sampled, unconfirmed answer saying why", a.Sampled, a.Confirmed, a.Note)
	}
	// More arrivals narrow the range.
	m2 := &tailModel{share: m.share, n: 20000}
	b, err := Search(context.Background(), m2.trial, Options{Start: 500, Precision: 0.05, Allowed: 0.01, MaxTrials: 200})
	if err != nil {
		t.Fatal(err)
	}
	if b.High/b.Low >= a.High/a.Low {
		t.Errorf("range with 20,000 arrivals [%g, %g] not narrower than with 1,000 [%g, %g]", b.Low, b.High, a.Low, a.High)
	}
	// Judged trial by trial, there is no range.
	c, _ := Search(context.Background(), (&model{p99: knee(100)}).trial, Options{Start: 500})
	if c.Low != 0 || c.High != 0 || c.Sampled || !c.Confirmed {
		t.Errorf("range [%g, %g], sampled %v, confirmed %v without tails; want no range, a confirmed answer", c.Low, c.High, c.Sampled, c.Confirmed)
	}
}

func TestSearchNarrowingEndsWhereTheTailsContradictIt(t *testing.T) {
	t.Parallel()
	// A polling lock with a bump: at 75–82/s a tenth of arrivals are over
	// (a stall the lock has there), elsewhere the share grows with the
	// rate. Narrowing below the answer meets failures it cannot move on.
	share := func(r float64) float64 {
		if r > 75 && r < 82 {
			return 0.1
		}
		return 0.01 * r / 100
	}
	for _, n := range []int64{1000, 3000} {
		m := &tailModel{share: share, n: n}
		a, err := Search(context.Background(), m.trial, Options{Start: 500, Precision: 0.05, Allowed: 0.01, MaxTrials: 200})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Steps) >= 60 || strings.Contains(a.Note, "trial budget") {
			t.Errorf("%d arrivals: %d trials, note %q: narrowing went round in circles", n, len(a.Steps), a.Note)
		}
		if a.Low != 0 || a.High != 0 {
			if a.Low > a.Rate || (a.High != 0 && a.High <= a.Rate) {
				t.Errorf("%d arrivals: answer %g outside its range [%g, %g]", n, a.Rate, a.Low, a.High)
			}
		}
		// Every trial of a pool carries the pool's verdict.
		for i := 1; i < len(a.Steps); i++ {
			if st := a.Steps[i]; st.Pool > 1 && a.Steps[i-1].Pass != st.Pass {
				t.Errorf("%d arrivals: pool at %g: trial %d says %v, the pool %v", n, st.Rate, st.Pool-1, a.Steps[i-1].Pass, st.Pass)
			}
		}
	}
}
