package capacity

import (
	"errors"
	"fmt"
	"strings"
)

// PhaseRepeat trials follow an answer with a rate that missed above it
// (confirmed, or not when full trials kept disagreeing with short ones):
// full trials at the answer and at the rate that missed, in turn, so that
// the answer's interval holds how the server moves from one trial to the
// next, not only how the tails of one trial sample it.
const PhaseRepeat Phase = "repeat"

// FromSpread: an end of Answer.Interval moved by the repeats (see
// Spread): a trial at the answer failed, or one at the rate that missed
// passed, so the end is the nearest rate on that side whose every trial
// agreed — or open (0) when none did.
const FromSpread = "spread"

// Spread is what the repeats after an answer showed: full trials at Rate
// (the search's answer before them: when one of them failed, Answer.Rate
// moves down to Low) and at Missed, the last full trial at each before them counted (a
// confirmed answer's confirmation; for one left unconfirmed, the full
// trials that disagreed).
type Spread struct {
	Rate, Missed float64
	// PassedAt of TrialsAt full trials at Rate passed; PassedMissed of
	// TrialsMissed at Missed.
	PassedAt, TrialsAt         int
	PassedMissed, TrialsMissed int
	// Low, when a trial at Rate failed, is the nearest rate below it at
	// which Repeats+1 full trials all passed (0 when none did within the
	// budget); High, when one at Missed passed, the nearest above it at
	// which as many all failed (see probe).
	Low, High float64
}

// Unstable says whether the repeats disagreed with the answer: the
// capacity moved across the rates the search told apart.
func (s *Spread) Unstable() bool {
	return s != nil && (s.PassedAt < s.TrialsAt || s.PassedMissed > 0)
}

// repeat runs opt.Repeats rounds of a full trial at the answer, then one
// at the rate that missed, and notes their spread. The repeats have a
// budget of their own beyond MaxTrials; a trial the machine limited or
// left unknown counts neither way.
func (s *search) repeat() error {
	at, up := s.lo, s.ans.Missed
	sp := &Spread{Rate: at, Missed: up}
	sp.PassedAt, sp.TrialsAt = s.lastFull(at)
	sp.PassedMissed, sp.TrialsMissed = s.lastFull(up)
	s.extra += 2 * s.opt.Repeats * s.opt.MaxPool
	var err error
	for range s.opt.Repeats {
		for _, r := range []float64{at, up} {
			var o Outcome
			if o, err = s.try(r, PhaseRepeat, true); err != nil {
				return err
			}
			if o.Limit != "" || o.Busy != "" && !o.Pass {
				continue
			}
			if r == at {
				sp.TrialsAt++
				sp.PassedAt += b2i(o.Pass)
			} else {
				sp.TrialsMissed++
				sp.PassedMissed += b2i(o.Pass)
			}
		}
	}
	if sp.PassedAt < sp.TrialsAt {
		if sp.Low, err = s.probe(at, false); err != nil {
			return err
		}
	}
	if sp.PassedMissed > 0 {
		if sp.High, err = s.probe(up, true); err != nil {
			return err
		}
	}
	s.ans.Spread = sp
	if sp.PassedAt < sp.TrialsAt && sp.Low > 0 {
		// The answer is the highest rate that passed every trial run at
		// it: a rate that passed one of four holds nobody's SLO.
		s.lo, s.ans.Confirmed = sp.Low, false
	}
	if sp.Unstable() {
		note := fmt.Sprintf("unstable: %d of %d full trials at %s passed and %d of %d at %s: the server's capacity moved between trials, and the interval spans it",
			sp.PassedAt, sp.TrialsAt, fmtRate(at), sp.PassedMissed, sp.TrialsMissed, fmtRate(up))
		switch {
		case sp.PassedAt < sp.TrialsAt && sp.Low > 0:
			note += fmt.Sprintf("; the answer is %s, where every full trial passed", fmtRate(sp.Low))
		case sp.PassedAt < sp.TrialsAt:
			note += "; no rate below passed every full trial within the trial budget"
		}
		s.ans.Note = strings.TrimSuffix(note+"; "+s.ans.Note, "; ")
	}
	return nil
}

// lastFull counts the last full trial the search ran at rate, if any, as
// (passed, trials): 1 of 1, 0 of 1 or 0 of 0. A confirmed answer's is its
// confirmation; the rate that missed it, the full failure that did.
func (s *search) lastFull(rate float64) (passed, trials int) {
	for i := len(s.ans.Steps) - 1; i >= 0; i-- {
		if st := s.ans.Steps[i]; st.Rate == rate && st.Full && !st.Unknown && st.Limit == "" {
			return b2i(st.Pass), 1
		}
	}
	return 0, 0
}

// probe looks for the nearest rate beyond from (above it when up, else
// below) at which every one of Repeats+1 full trials agrees — fails when
// up, passes when not: steps of Precision, doubling, up to the rates
// allowed. One trial that disagrees moves it on. It returns 0 when no
// rate agreed within the budget (the interval's end is then open).
func (s *search) probe(from float64, up bool) (float64, error) {
	k := s.opt.Repeats + 1
	s.extra += 6 * k * s.opt.MaxPool
	for step := s.opt.Precision; step < 64; step *= 2 {
		r := from * (1 + step)
		if !up {
			r = from / (1 + step)
		}
		if r < s.opt.Min || r > s.opt.Max {
			return 0, nil
		}
		agreed := true
		for range k {
			o, err := s.try(r, PhaseRepeat, true)
			if errors.Is(err, errStop) {
				return 0, nil
			}
			if err != nil {
				return 0, err
			}
			if o.Limit == "" && o.Pass == up {
				agreed = false
				break
			}
		}
		if agreed {
			return r, nil
		}
	}
	return 0, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
