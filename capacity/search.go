package capacity

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// Phase is what a trial was for.
type Phase string

// The phases of a search.
const (
	PhaseBracket Phase = "bracket" // growing (or shrinking) the rate until one passes and one fails
	PhaseBisect  Phase = "bisect"  // halving the bracket with short trials
	PhaseConfirm Phase = "confirm" // full-length trials at the answer and one step above it
)

// Outcome is what one trial showed.
type Outcome struct {
	Pass bool
	// Why says what failed it ("p99 14.2ms > 10ms", "312 dropped").
	Why string
	// Limit, when set, names what other than the lock failed the trial
	// (lockbench's schedule lag or CPU, other work on the machine): that
	// trial says nothing of the lock, so the search stops there.
	Limit string
}

// Trial runs one trial at rate arrivals per second; full asks for the
// full duration (a confirmation), otherwise a short one. An error ends
// the search.
type Trial func(ctx context.Context, rate float64, phase Phase, full bool) (Outcome, error)

// Options bound a search. Zero values take the defaults named.
type Options struct {
	// Start is the first rate tried. The default is 100/s.
	Start float64
	// Growth is the factor the bracket grows or shrinks the rate by. The
	// default is 2.
	Growth float64
	// Min and Max bound the rates tried. The defaults are 1/s and 1e6/s.
	Min, Max float64
	// Precision is the bracket's width at which bisection stops, relative
	// to its lower end; the answer is within it of the true capacity. The
	// default is 0.05.
	Precision float64
	// MaxTrials bounds the trials of the whole search. The default is 40.
	MaxTrials int
	// MaxRounds bounds how often a failed confirmation reopens the
	// search. The default is 3.
	MaxRounds int
}

func (o Options) withDefaults() Options {
	def := func(v *float64, d float64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Start, 100)
	def(&o.Growth, 2)
	def(&o.Min, 1)
	def(&o.Max, 1e6)
	def(&o.Precision, 0.05)
	if o.Growth <= 1 {
		o.Growth = 2
	}
	if o.MaxTrials <= 0 {
		o.MaxTrials = 40
	}
	if o.MaxRounds <= 0 {
		o.MaxRounds = 3
	}
	o.Start = min(max(o.Start, o.Min), o.Max)
	return o
}

// Step is one trial of a search, in the order run.
type Step struct {
	Rate  float64
	Phase Phase
	Full  bool
	Outcome
}

// Answer is what a search found.
type Answer struct {
	// Rate is the highest rate that passed, 0 when none did.
	Rate float64
	// Confirmed: a full trial at Rate passed and one at Missed failed.
	Confirmed bool
	// Missed is the rate above Rate that failed its full trial (or, when
	// unconfirmed, the lowest rate seen failing above Rate); 0 if none.
	Missed float64
	// Limit names what other than the lock stopped the search, if
	// anything did (see Outcome.Limit).
	Limit string
	// Note says why the search ended where it did when it is not a
	// confirmed answer (the trial budget, the highest rate allowed).
	Note  string
	Steps []Step
}

// errStop ends a search early with its answer so far; Answer.Note says
// why. Search never returns it.
var errStop = errors.New("capacity: search stopped")

// search is one search's state: the highest passing rate (lo, 0 when
// none yet) and the lowest failing rate above it (hi, 0 when none yet).
type search struct {
	ctx    context.Context
	trial  Trial
	opt    Options
	lo, hi float64
	// long: a full trial failed where short ones passed, so the short
	// ones are optimistic here and bisection goes on with full trials.
	long bool
	// retried: the trial just run repeats one failed by lockbench's limit.
	retried bool
	ans     Answer
}

// Search finds the highest rate whose trials pass: it brackets by growing
// the rate from Start (or shrinking it, if Start fails), bisects the
// bracket with short trials down to Precision, then confirms — a full
// trial at the answer must pass and one a step (Precision) above must
// fail; a confirmation that disagrees reopens the bracket, at most
// MaxRounds times, and bisection then goes on with full trials. Trials are bounded by MaxTrials; a trial failed by
// something other than the lock (Outcome.Limit) twice in a row ends the
// search.
func Search(ctx context.Context, trial Trial, opt Options) (Answer, error) {
	s := &search{ctx: ctx, trial: trial, opt: opt.withDefaults()}
	err := s.run()
	if errors.Is(err, errStop) {
		err = nil
	}
	s.ans.Rate = s.lo
	if !s.ans.Confirmed && s.ans.Missed == 0 {
		s.ans.Missed = s.hi
	}
	return s.ans, err
}

func (s *search) run() error {
	for round := 0; round < s.opt.MaxRounds; round++ {
		if err := s.bracket(); err != nil {
			return err
		}
		if err := s.bisect(); err != nil {
			return err
		}
		done, err := s.confirm()
		if done || err != nil {
			return err
		}
	}
	s.ans.Note = fmt.Sprintf("full trials disagreed with short ones for %d rounds", s.opt.MaxRounds)
	return nil
}

// try runs a trial within the budget and records it.
func (s *search) try(rate float64, phase Phase, full bool) (Outcome, error) {
	if len(s.ans.Steps) >= s.opt.MaxTrials {
		s.ans.Note = fmt.Sprintf("stopped after %d trials (the trial budget)", s.opt.MaxTrials)
		return Outcome{}, errStop
	}
	if err := s.ctx.Err(); err != nil {
		return Outcome{}, err
	}
	o, err := s.trial(s.ctx, rate, phase, full)
	if err != nil {
		return o, err
	}
	s.ans.Steps = append(s.ans.Steps, Step{Rate: rate, Phase: phase, Full: full, Outcome: o})
	if !o.Pass && o.Limit != "" && !s.retried {
		// One late trial on a busy machine is a blip, not a limit: the
		// same rate once more decides.
		s.retried = true
		return s.try(rate, phase, full)
	}
	s.retried = false
	if !o.Pass && o.Limit != "" {
		s.ans.Limit = o.Limit
		s.ans.Note = fmt.Sprintf("stopped at %s: %s — not the lock's limit", fmtRate(rate), o.Limit)
		return o, errStop
	}
	return o, nil
}

// bracket finds a passing rate with a failing one above it.
func (s *search) bracket() error {
	for s.lo == 0 { // nothing passes yet: shrink from the lowest failure
		r := s.opt.Start
		if s.hi > 0 {
			r = s.hi / s.opt.Growth
		}
		if r < s.opt.Min {
			s.ans.Note = fmt.Sprintf("no rate down to %s passed", fmtRate(s.opt.Min))
			return errStop
		}
		o, err := s.try(r, PhaseBracket, false)
		if err != nil {
			return err
		}
		s.record(r, o.Pass)
	}
	for s.hi == 0 { // nothing fails yet: grow from the highest pass
		if s.lo >= s.opt.Max {
			s.ans.Note = fmt.Sprintf("every rate up to the highest allowed (%s) passed", fmtRate(s.opt.Max))
			return errStop
		}
		r := min(s.lo*s.opt.Growth, s.opt.Max)
		o, err := s.try(r, PhaseBracket, false)
		if err != nil {
			return err
		}
		s.record(r, o.Pass)
	}
	return nil
}

// record narrows the bracket by one trial's verdict.
func (s *search) record(rate float64, pass bool) {
	if pass {
		s.lo = max(s.lo, rate)
		if s.hi != 0 && s.hi <= s.lo {
			s.hi = 0 // a pass at or above the failure: the failure was noise
		}
		return
	}
	if s.hi == 0 || rate < s.hi {
		s.hi = rate
	}
	if rate <= s.lo {
		s.lo = s.passBelow(rate)
	}
}

// passBelow is the highest rate below r that passed a trial, 0 if none.
func (s *search) passBelow(r float64) float64 {
	best := 0.0
	for _, st := range s.ans.Steps {
		if st.Pass && st.Rate < r {
			best = max(best, st.Rate)
		}
	}
	return best
}

// bisect halves the bracket with short trials until it is Precision wide.
func (s *search) bisect() error {
	for s.lo > 0 && s.hi > 0 && (s.hi-s.lo)/s.lo > s.opt.Precision {
		mid := (s.lo + s.hi) / 2
		o, err := s.try(mid, PhaseBisect, s.long)
		if err != nil {
			return err
		}
		s.record(mid, o.Pass)
	}
	if s.lo == 0 || s.hi == 0 {
		return s.bracket()
	}
	return nil
}

// confirm runs the full trials; done is false when they disagreed with
// the short ones and the search must go on.
func (s *search) confirm() (done bool, err error) {
	at := s.lo
	o, err := s.try(at, PhaseConfirm, true)
	if err != nil {
		return false, err
	}
	if !o.Pass {
		s.record(at, false)
		s.long = true
		return false, nil
	}
	up := at * (1 + s.opt.Precision)
	o, err = s.try(up, PhaseConfirm, true)
	if err != nil {
		return false, err
	}
	if o.Pass {
		s.record(up, true)
		return false, nil
	}
	s.hi = up
	s.ans.Confirmed, s.ans.Missed = true, up
	return true, nil
}

// Rates lists the rates a search tried, ascending and without repeats.
func (a Answer) Rates() []float64 {
	var out []float64
	for _, st := range a.Steps {
		out = append(out, st.Rate)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func fmtRate(r float64) string { return fmt.Sprintf("%.0f/s", r) }
