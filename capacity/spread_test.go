package capacity

import (
	"context"
	"math/rand/v2"
	"testing"
)

// drifting is a server whose capacity moves from one trial to the next:
// each trial draws it from levels (the ZooKeeper read 484/s and
// 682/s two minutes apart). A trial passes when its rate is at or below
// the capacity it drew.
func drifting(r *rand.Rand, levels ...float64) Trial {
	return func(_ context.Context, rate float64, _ Phase, _ bool) (Outcome, error) {
		if rate <= levels[r.IntN(len(levels))] {
			return Outcome{Pass: true}, nil
		}
		return Outcome{Why: "over"}, nil
	}
}

// On a steady server the repeats agree with the answer: the interval is
// the bracket's, and holds the capacity.
func TestRepeatsOnASteadyServerKeepTheBracket(t *testing.T) {
	t.Parallel()
	m := &model{p99: knee(600)}
	ans, err := Search(context.Background(), m.trial, Options{Start: 100, Repeats: 2})
	if err != nil {
		t.Fatal(err)
	}
	sp := ans.Spread
	if sp == nil || sp.Unstable() || sp.TrialsAt != 3 || sp.TrialsMissed != 3 || sp.PassedAt != 3 || sp.PassedMissed != 0 {
		t.Fatalf("spread %+v, want 3 of 3 passing at the answer and 0 of 3 at the rate that missed", sp)
	}
	lo, hi, lf, hf := ans.Interval()
	if lo != ans.Rate || hi != ans.Missed || lf != FromBracket || hf != FromBracket || lo > 600 || hi < 600 {
		t.Errorf("interval [%g (%s), %g (%s)], answer %g missed %g: want the bracket, holding 600", lo, lf, hi, hf, ans.Rate, ans.Missed)
	}
	repeats := 0
	for _, st := range ans.Steps {
		if st.Phase == PhaseRepeat {
			repeats++
		}
	}
	if repeats != 4 {
		t.Errorf("%d repeat trials, want 2 rounds of 2", repeats)
	}
}

// On a server whose capacity moves between 484/s and 682/s from trial to
// trial, a search without repeats answers one level or the other with a
// bracket a step wide, and two searches in a row disagree; with repeats
// the answer is called unstable and its interval spans both levels, so
// that two searches in a row agree within their intervals.
func TestRepeatsCarryTheSpreadIntoTheInterval(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 51))
	const pairs = 200
	var apart, overlapNone, overlap, unstable, spans, safe, bareSafe int
	for range pairs {
		var ivs [2][2]float64
		var bare [2][2]float64
		for i := range 2 {
			a, err := Search(context.Background(), drifting(r, 484, 682), Options{Start: 100})
			if err != nil {
				t.Fatal(err)
			}
			bare[i][0], bare[i][1], _, _ = a.Interval()
			if a.Rate <= 484 {
				bareSafe++
			}
			ans, err := Search(context.Background(), drifting(r, 484, 682), Options{Start: 100, Repeats: 3})
			if err != nil {
				t.Fatal(err)
			}
			lo, hi, _, _ := ans.Interval()
			if hi == 0 {
				hi = 1e9 // open above
			}
			ivs[i] = [2]float64{lo, hi}
			if ans.Spread.Unstable() {
				unstable++
			}
			if ans.Rate <= 484 {
				safe++ // every trial passes at it, whatever the server drew
			}
			if lo <= 484 && hi >= 682 {
				spans++
			}
		}
		if bare[0][1] < bare[1][0] || bare[1][1] < bare[0][0] {
			overlapNone++
		}
		if ivs[0][1] >= ivs[1][0] && ivs[1][1] >= ivs[0][0] {
			overlap++
		} else {
			apart++
		}
	}
	t.Logf("%d pairs of searches: without repeats %d pairs' intervals did not overlap; with repeats %d overlapped, %d did not; %d of %d answers unstable, %d intervals spanning both levels; answers every trial passes at: %d of %d with repeats, %d without",
		pairs, overlapNone, overlap, apart, unstable, 2*pairs, spans, safe, 2*pairs, bareSafe)
	if safe < 2*pairs*8/10 {
		t.Errorf("with repeats %d of %d answers are rates every trial passes at (484/s or below), want 80 %%", safe, 2*pairs)
	}
	if overlapNone < pairs/10 {
		t.Errorf("without repeats only %d of %d pairs disagreed: the server does not drift enough to test anything", overlapNone, pairs)
	}
	if apart > pairs*8/100 {
		t.Errorf("with repeats %d of %d pairs of searches disagreed beyond their intervals, want at most 8 %% (without repeats: %d)", apart, pairs, overlapNone)
	}
}
