package capacity

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// Phase is what a trial was for.
type Phase string

// The phases of a search.
const (
	PhaseBracket Phase = "bracket" // growing (or shrinking) the rate until one passes and one fails
	PhaseBisect  Phase = "bisect"  // halving the bracket with short trials
	PhaseConfirm Phase = "confirm" // full-length trials at the answer and one step above it
	PhaseNarrow  Phase = "narrow"  // trials that narrow the range a sampled answer lies in
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
	// Tail is the trial's arrivals over the SLO's limit, and Besides what
	// failed it other than its tail ("" when nothing did). When nothing
	// did and Options.Allowed is set, the verdict is the tail's share,
	// and a share too close to the allowed one to decide is pooled with
	// further trials at the same rate (see Options.MaxArrivals).
	Tail    Tail
	Besides string
	// Busy, when set, names what other than the lock limited a trial
	// that passed (lockbench fell behind, other work kept the machine
	// busy; see Limit for one that failed). A failure on a busy machine
	// is never counted, so a pass there must not be either: a pool that
	// kept the passes and set the failures aside would lean toward
	// passing exactly when the machine is busy. A pool counts such a
	// trial as unknown, neither pass nor failure.
	Busy string
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
	// Allowed is the share of arrivals the SLO's quantile lets exceed its
	// limit (0.01 for a p99); 0 judges each trial by its own verdict.
	Allowed float64
	// MaxArrivals bounds the arrivals pooled at one rate while their tail
	// cannot decide the verdict at 95 % (Tail.Decides). The default is
	// 40/Allowed: four trials' worth at ten arrivals over the quantile.
	MaxArrivals int64
	// Repeats is the rounds of full trials at the answer and at the rate
	// that missed above it, in turn, after the search (see Spread); 0
	// runs none.
	Repeats int
	// MaxPool bounds the trials pooled at one rate, for rates so low that
	// a trial holds fewer arrivals than it should (a trial's length is
	// bounded too). The default is 4.
	MaxPool int
	// Report, if set, is told each trial once its verdict is known,
	// pooled with those before it at the same rate.
	Report func(Step)
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
	if o.MaxPool <= 0 {
		o.MaxPool = 4
	}
	if o.Allowed > 0 && o.MaxArrivals <= 0 {
		o.MaxArrivals = int64(math.Ceil(40 / o.Allowed))
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
	// Pool numbers the trials run at one rate for one verdict (1 for the
	// first; 0 for one the pool did not count, see Unknown); Pooled is
	// their tail so far, this trial's included, and
	// Decided says whether it decides the verdict at 95 %. A verdict
	// resting on Pooled is the share's, not this trial's alone.
	Pool    int
	Pooled  Tail
	Decided bool
	// Unknown: the trial ran on a busy machine (Outcome.Busy) and its
	// pool counted it neither way; Pass is false and Pooled leaves its
	// tail out.
	Unknown bool
	// PoolSize is how many trials' tails the finished pool's verdict
	// rests on (its trials less the unknown ones), and Verdict their
	// tail: set on every counted trial of the pool once it ends.
	PoolSize int
	Verdict  Tail
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
	Note string
	// Sampled: bisection stopped because both ends of the bracket were
	// too close to call (see Options.MaxArrivals), so the answer is
	// unconfirmed and as precise as Low and High say.
	Sampled bool
	// Low and High bound the lock's capacity at a nominal 95 % when
	// trials were judged by their tails (Options.Allowed): the highest
	// rate whose tails decided a pass and the lowest whose tails decided
	// a failure, 0 when none did (see decided). No rate tried between
	// them was decided. Both are 0 when they would not hold Rate.
	Low, High float64
	// Spread is what the repeats after the answer showed; nil
	// when none ran.
	Spread *Spread
	Steps  []Step
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
	// ones are optimistic here and the search goes on with full trials.
	// fullFail is the lowest rate a full trial failed (0 none): no
	// trial's pass at or above it moves the answer there.
	long     bool
	fullFail float64
	// retried: the trial just run repeats one failed by lockbench's limit.
	retried bool
	// reported counts the steps told to Options.Report.
	reported int
	// extra is the repeats' trials, beyond MaxTrials, once they run.
	extra int
	// edge holds the rates whose tails stayed too close to call with
	// MaxArrivals pooled; sampled: the bracket's two ends are such rates,
	// so bisecting further would only add more of them.
	edge    map[float64]bool
	sampled bool
	ans     Answer
}

// Search finds the highest rate whose trials pass: it brackets by growing
// the rate from Start (or shrinking it, if Start fails), bisects the
// bracket with short trials down to Precision, then confirms — a full
// trial at the answer must pass and one a step (Precision) above must
// fail; a confirmation that disagrees reopens the bracket, at most
// MaxRounds times, and bisection then goes on with full trials. With
// Options.Allowed, a trial whose tail is too close to call is pooled with
// more at its rate; when both ends of the bracket stay so, bisection
// stops unconfirmed (Answer.Sampled) and narrows the range the tails
// decide instead. Trials are bounded by MaxTrials; a trial failed by
// something other than the lock (Outcome.Limit) twice in a row ends the
// search.
func Search(ctx context.Context, trial Trial, opt Options) (Answer, error) {
	s := &search{ctx: ctx, trial: trial, opt: opt.withDefaults()}
	err := s.run()
	if !s.ans.Confirmed && s.ans.Missed == 0 {
		s.ans.Missed = s.hi
	}
	if err == nil && s.opt.Repeats > 0 && s.lo > 0 && !s.sampled && s.ans.Missed > 0 {
		err = s.repeat()
	}
	if errors.Is(err, errStop) {
		err = nil
	}
	s.ans.Rate = s.lo
	if s.opt.Allowed > 0 {
		s.ans.Low, s.ans.High = s.ans.decided(s.opt.Allowed)
		s.ans.checkRange()
	}
	return s.ans, err
}

// checkRange drops a range that does not hold the answer — the tails
// decided against a verdict the bisection rested on, or were not
// monotone in the rate — and says so.
func (a *Answer) checkRange() {
	if a.Rate == 0 || a.Low == 0 && a.High == 0 {
		return
	}
	if (a.High == 0 || a.Rate < a.High) && a.Low <= a.Rate {
		return
	}
	a.Low, a.High = 0, 0
	if a.Note != "" {
		a.Note += "; "
	}
	a.Note += "the trials' tails do not bound the answer (they are not monotone in the rate here): no range"
}

// decided bounds the capacity by the trials' tails (see Answer.Low). A
// lock's share over the limit does not fall as the rate grows, so tails
// pooled over the rates from r upwards that decide a pass decide one at
// r, and tails pooled up to r that decide a failure decide one at r:
// every trial near the answer counts, not only those at one rate.
func (a Answer) decided(allowed float64) (low, high float64) {
	byRate := map[float64]Tail{}
	for _, st := range a.Steps {
		switch {
		case st.Limit != "", st.Besides != "", st.Unknown:
			// A drop or an error is one event, not a share: it decides
			// nothing about the tail; nor does a busy machine's.
		case st.Tail.Arrivals > 0:
			byRate[st.Rate] = byRate[st.Rate].Add(st.Tail)
		}
	}
	rates := slices.Sorted(maps.Keys(byRate))
	for i, r := range rates {
		var up, down Tail
		for j := i; j < len(rates); j++ { // r and the rates above it
			if up = up.Add(byRate[rates[j]]); up.Decides(allowed) && up.Share() <= allowed {
				low = max(low, r)
				break
			}
		}
		for j := i; j >= 0; j-- { // r and the rates below it
			if down = down.Add(byRate[rates[j]]); down.Decides(allowed) && down.Share() > allowed {
				if high == 0 || r < high {
					high = r
				}
				break
			}
		}
	}
	if high != 0 && low >= high { // the tails are not monotone: checkRange says so
		return 0, 0
	}
	return low, high
}

func (s *search) run() error {
	for round := 0; round < s.opt.MaxRounds; round++ {
		if err := s.bracket(); err != nil {
			return err
		}
		if err := s.bisect(); err != nil {
			return err
		}
		if s.sampled {
			s.ans.Sampled = true
			s.ans.Note = fmt.Sprintf("%s and %s were too close to call with %d and %d arrivals pooled: near the answer the share of arrivals over the limit is a sample, not the lock's",
				fmtRate(s.lo), fmtRate(s.hi), s.pooled(s.lo), s.pooled(s.hi))
			return s.narrow()
		}
		done, err := s.confirm()
		if done || err != nil {
			return err
		}
	}
	s.ans.Note = fmt.Sprintf("full trials disagreed with short ones for %d rounds", s.opt.MaxRounds)
	return nil
}

// try runs a trial within the budget and records it; a verdict resting
// on a tail too close to call pools further trials at the same rate.
// A trial on a busy machine (Outcome.Busy) is unknown: the pool leaves
// its tail out and runs another in its place, within MaxPool trials.
func (s *search) try(rate float64, phase Phase, full bool) (Outcome, error) {
	o, err := s.once(rate, phase, full)
	if err != nil || !s.pools(o) {
		s.report()
		return o, err
	}
	var pool Tail
	var counted []int // the pool's steps whose tails it holds
	for n := 1; ; n++ {
		i := len(s.ans.Steps) - 1
		st := &s.ans.Steps[i]
		if st.Unknown = o.Busy != ""; !st.Unknown {
			pool = pool.Add(o.Tail)
			counted = append(counted, i)
		}
		st.Pooled = pool
		if !st.Unknown {
			st.Pool = len(counted)
		}
		st.Decided = len(counted) > 0 && pool.Decides(s.opt.Allowed)
		st.Pass = !st.Unknown && pool.Share() <= s.opt.Allowed
		s.report()
		if st.Decided || pool.Arrivals >= s.opt.MaxArrivals || n >= s.opt.MaxPool {
			return s.endPool(rate, o, pool, counted)
		}
		if o, err = s.once(rate, phase, full); err != nil || o.Limit != "" || o.Besides != "" {
			s.report() // failed besides its tail: that decides, for the pool too
			for _, i := range counted {
				s.ans.Steps[i].Pass = s.ans.Steps[i].Pass && o.Besides == ""
			}
			return o, err
		}
	}
}

// pools says whether a trial's verdict rests on its tail, and so may be
// pooled with more trials at its rate.
func (s *search) pools(o Outcome) bool {
	return s.opt.Allowed > 0 && o.Limit == "" && o.Besides == "" && (o.Tail.Arrivals > 0 || o.Busy != "")
}

// endPool gives the pool's verdict to every trial it counted: an earlier
// one left passing would still count as a pass (passBelow), and one
// between them that the machine limited (retried by once, or unknown) is
// no part of it. A pool that counted no trial, every one of them on a
// busy machine, says nothing of the lock: the search stops there, as it
// does on two failures in a row that were not the lock's.
func (s *search) endPool(rate float64, o Outcome, pool Tail, counted []int) (Outcome, error) {
	if len(counted) == 0 {
		s.ans.Limit = o.Busy
		s.ans.Note = fmt.Sprintf("stopped at %s: %s — not the lock's limit", fmtRate(rate), o.Busy)
		return o, errStop
	}
	last := s.ans.Steps[counted[len(counted)-1]]
	if s.edge == nil {
		s.edge = map[float64]bool{}
	}
	s.edge[rate] = !last.Decided
	for _, i := range counted {
		st := &s.ans.Steps[i]
		st.Pass, st.PoolSize, st.Verdict = last.Pass, len(counted), pool
	}
	o.Pass = last.Pass
	return o, nil
}

// pooled is the arrivals of the last pool at rate.
func (s *search) pooled(rate float64) int64 {
	for i := len(s.ans.Steps) - 1; i >= 0; i-- {
		if st := s.ans.Steps[i]; st.Rate == rate && st.Pool > 0 {
			return st.Pooled.Arrivals
		}
	}
	return 0
}

// report tells Options.Report the last step, once.
func (s *search) report() {
	if n := len(s.ans.Steps); s.opt.Report != nil && n > s.reported {
		s.reported = n
		s.opt.Report(s.ans.Steps[n-1])
	}
}

// once runs one trial and records it; one failed by lockbench's limit is
// run again once before it ends the search.
func (s *search) once(rate float64, phase Phase, full bool) (Outcome, error) {
	if len(s.ans.Steps) >= s.opt.MaxTrials+s.extra {
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
		s.report()
		return s.once(rate, phase, full)
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
		o, err := s.try(r, PhaseBracket, s.long)
		if err != nil {
			return err
		}
		s.record(r, o.Pass, s.long)
	}
	for s.hi == 0 { // nothing fails yet: grow from the highest pass
		if s.lo >= s.opt.Max {
			s.ans.Note = fmt.Sprintf("every rate up to the highest allowed (%s) passed", fmtRate(s.opt.Max))
			return errStop
		}
		r := min(s.lo*s.opt.Growth, s.opt.Max)
		o, err := s.try(r, PhaseBracket, s.long)
		if err != nil {
			return err
		}
		s.record(r, o.Pass, s.long)
	}
	return nil
}

// record narrows the bracket by one trial's verdict. A full trial's
// failure outranks every pass at or above its rate, short or full: short
// trials are optimistic near the answer (a queue has no time to build),
// and a full trial passing above one that failed is the noise of the
// full trials, so the answer stays below the lowest full failure.
func (s *search) record(rate float64, pass, full bool) {
	if pass {
		if s.fullFail > 0 && rate >= s.fullFail {
			return
		}
		s.lo = max(s.lo, rate)
		if s.hi != 0 && s.hi <= s.lo {
			s.hi = 0 // a pass at or above the failure: the failure was noise
			if s.fullFail > s.lo {
				s.hi = s.fullFail // unless a full trial's failure it was
			}
		}
		return
	}
	if full && (s.fullFail == 0 || rate < s.fullFail) {
		s.fullFail = rate
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

// bisect halves the bracket with short trials until it is Precision wide,
// or both its ends are too close to call (sampled).
func (s *search) bisect() error {
	for s.lo > 0 && s.hi > 0 && (s.hi-s.lo)/s.lo > s.opt.Precision {
		if s.edge[s.lo] && s.edge[s.hi] {
			s.sampled = true
			return nil
		}
		mid := (s.lo + s.hi) / 2
		o, err := s.try(mid, PhaseBisect, s.long)
		if err != nil {
			return err
		}
		s.record(mid, o.Pass, s.long)
	}
	if s.lo == 0 || s.hi == 0 {
		return s.bracket()
	}
	return nil
}

// narrow tightens the range a sampled answer lies in (Answer.Low, High):
// it halves the gap between the bracket and the range's each end until
// the gap is Precision wide or its middle is too close to call as well.
// Its trials inform the range only; the answer stays the bisection's.
func (s *search) narrow() error {
	for _, above := range []bool{true, false} {
		low, high := s.ans.decided(s.opt.Allowed)
		a, b := low, s.lo // the gap below the answer
		if above {
			a, b = s.hi, high
		}
		for a > 0 && b > 0 && (b-a)/a > s.opt.Precision {
			mid := (a + b) / 2
			o, err := s.try(mid, PhaseNarrow, s.long)
			if err != nil {
				return err
			}
			l, h := s.ans.decided(s.opt.Allowed)
			if s.edge[mid] || (l == low && h == high) || o.Pass == above {
				break // too close to call, no nearer bound, or against the bracket
			}
			low, high = l, h
			if above {
				b = mid
			} else {
				a = mid
			}
		}
	}
	return nil
}

// confirm runs the full trials; done is false when they disagreed with
// the short ones and the search must go on. A full trial that already
// failed within a step above the answer confirms it without another.
func (s *search) confirm() (done bool, err error) {
	at := s.lo
	o, err := s.try(at, PhaseConfirm, true)
	if err != nil {
		return false, err
	}
	if !o.Pass {
		s.record(at, false, true)
		s.long = true
		return false, nil
	}
	up := at * (1 + s.opt.Precision)
	if s.fullFail > at && s.fullFail <= up {
		s.hi = s.fullFail
		s.ans.Confirmed, s.ans.Missed = true, s.fullFail
		return true, nil
	}
	o, err = s.try(up, PhaseConfirm, true)
	if err != nil {
		return false, err
	}
	if o.Pass {
		s.record(up, true, true)
		return false, nil
	}
	s.record(up, false, true)
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
