package plan

import (
	"context"
	"errors"
	"fmt"
	"github.com/lockbench/lockbench/judge"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/capacity"
	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// search finds one implementation's highest rate at the SLO.
func (c *Capacity) search(ctx context.Context, name string) (result.CapacitySearch, error) {
	began := time.Now()
	out := result.CapacitySearch{Impl: name, Scenario: "rate", MaxArrivals: c.maxArrivals()}
	if d, ok := impl.Lookup(name); ok && d.Wait != nil {
		out.Wait = d.Wait(c.Base.Cell.Config)
	}
	busy := false           // the last trial failed on a busy machine
	var cells []result.Cell // each trial's, for the answer's latency
	trial := func(ctx context.Context, rate float64, phase capacity.Phase, full bool) (capacity.Outcome, error) {
		if busy {
			c.waitQuiet(ctx, quietWait)
		}
		t, o, limit, cell, err := c.rateTrial(ctx, name, len(out.Trials)+1, rate, phase, full)
		if err != nil {
			return o, err
		}
		cells = append(cells, cell)
		busy = limit.Kind == result.LimitMachineBusy
		out.Trials = append(out.Trials, t)
		return o, nil
	}
	tell := func(st capacity.Step) { // the trial's verdict, pooled with those before it
		t := &out.Trials[len(out.Trials)-1]
		switch {
		case st.Unknown: // a busy machine's: its pool counted it neither way
			t.Pass, t.Unknown = false, st.Busy
		case st.Pool > 0:
			t.Pool, t.PooledOver, t.PooledArrivals, t.Decided = st.Pool, st.Pooled.Over, st.Pooled.Arrivals, st.Decided
			t.PooledDispersion = dispersion(st.Pooled)
			if t.Pass != st.Pass || st.Pool > 1 {
				t.Pass, t.PoolShare = st.Pass, c.share(st.Pooled)
			}
		}
		if c.OnTrial != nil {
			c.OnTrial(name, *t, c.slo)
		}
	}
	ans, err := capacity.Search(ctx, trial, capacity.Options{
		Start: c.StartRate, Max: c.MaxRate, Precision: c.Precision, MaxTrials: c.MaxTrials, Repeats: c.Repeats,
		Allowed: c.slo.TailShare(), MaxArrivals: out.MaxArrivals, Report: tell,
	})
	out.Rate, out.Confirmed, out.Missed, out.Limit, out.Note = ans.Rate, ans.Confirmed, ans.Missed, ans.Limit, ans.Note
	out.Low, out.High, out.Sampled = ans.Low, ans.High, ans.Sampled
	if sp := ans.Spread; sp != nil {
		out.Spread = &result.CapacitySpread{Rate: sp.Rate, Missed: sp.Missed, PassedAt: sp.PassedAt, TrialsAt: sp.TrialsAt,
			PassedMissed: sp.PassedMissed, TrialsMissed: sp.TrialsMissed, Low: sp.Low, High: sp.High}
		out.Unstable = sp.Unstable()
	}
	if err != nil { // else the verdict would read as a finished search's
		cut := "ended by an error mid-search"
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			cut = fmt.Sprintf("--max-time %v ran out mid-search", c.MaxTime)
		case errors.Is(err, context.Canceled):
			cut = "interrupted mid-search"
		}
		// The cut comes first: a note the search wrote before it (its
		// ends too close to call) is about an answer it did not finish.
		out.Note = strings.TrimSuffix(cut+"; "+out.Note, "; ")
	}
	c.poolVerdicts(out.Trials, ans.Steps)
	if ierr := c.intervals(&out, ans, cells); ierr != nil && err == nil {
		err = ierr
	}
	for _, t := range out.Trials { // the latency at the answer: its last passing trial
		if t.Pass && t.Rate == ans.Rate {
			out.LatencyUs = t.LatencyUs
		}
	}
	out.WallS = time.Since(began).Seconds()
	return out, err
}

// rateTrial runs the n-th trial of a search and judges it: the trial as
// capacity.json keeps it, the outcome the search goes on from, and what
// other than the lock limited it, if anything did.
func (c *Capacity) rateTrial(ctx context.Context, name string, n int, rate float64, phase capacity.Phase, full bool) (result.SearchTrial, capacity.Outcome, result.TrialLimit, result.Cell, error) {
	d := c.Trial
	if full {
		d = c.Base.Cell.Duration
	}
	d = max(d, tailLength(rate, c.slo))
	// Each trial draws arrivals of its own (--seed plus its number):
	// trials pooled at one rate are then samples of the lock, not the
	// same arrivals again, and a search is still repeatable.
	cell, dir, err := c.trial(ctx, name, "rate", c.Inflight, rate, d, fmt.Sprintf("%02d-%s-%.0f", n, phase, rate), c.Base.Cell.Config.Seed+uint64(n))
	if err != nil {
		return result.SearchTrial{}, capacity.Outcome{}, result.TrialLimit{}, cell, err
	}
	t := searchTrial(cell, c.slo, rate, phase, full, dir)
	// Whatever the verdict: a pass on a busy machine counted where a
	// failure there is set aside would bias a pool toward passing.
	limit := judge.TrialLimit(cell, c.slo, c.OthersShare)
	o := capacity.Outcome{Pass: t.Pass, Why: t.Why, Besides: report.TrialWhy(judge.TrialBesidesTail(cell, c.slo))}
	switch words := report.TrialLimitWords(limit); {
	case limit.Kind == "":
	case t.Pass:
		o.Busy = words
	default:
		t.LimitedBy, o.Limit = &limit, words
	}
	tail, err := c.tail(dir, cell)
	if err != nil {
		return t, o, limit, cell, err
	}
	if tail.Arrivals > 0 {
		o.Tail = tail
		t.Over, t.Arrivals, t.Dispersion = tail.Over, tail.Arrivals, dispersion(tail)
	}
	return t, o, limit, cell, nil
}

// poolVerdicts gives each trial of a pool the pool's verdict and the
// share it rests on, as the search judged it (OnTrial heard each as it
// ended, with the pool so far), and the count of trials it rests on. A
// trial the pool did not count (the machine's) keeps its own.
func (c *Capacity) poolVerdicts(ts []result.SearchTrial, steps []capacity.Step) {
	for i := range min(len(ts), len(steps)) {
		st, t := steps[i], &ts[i]
		if st.PoolSize == 0 {
			continue
		}
		if st.PoolSize > 1 {
			t.PoolTrials = st.PoolSize
		}
		if t.Pass != st.Pass || st.PoolSize > 1 {
			t.Pass, t.PoolShare = st.Pass, c.share(st.Verdict)
		}
	}
}

// maxArrivals bounds the arrivals pooled at one rate (MaxArrivals, by
// default four trials' worth: 4,000 for a p99); 0 when the SLO's quantile
// is not a share of arrivals (max, mean).
func (c *Capacity) maxArrivals() int64 {
	share := c.slo.TailShare()
	switch {
	case share == 0:
		return 0
	case c.MaxArrivals > 0:
		return c.MaxArrivals
	}
	return int64(math.Ceil(40 / share))
}

// tail reads back a trial's acquire latencies (from the intended start)
// from its interval log, second by second.
func (c *Capacity) tail(dir string, cell result.Cell) (capacity.Tail, error) {
	l, err := hlog.ReadCell(filepath.Join(c.Base.Out, dir), cell)
	if err != nil {
		return capacity.Tail{}, fmt.Errorf("lockbench: capacity: reading the trial back: %w", err)
	}
	var t capacity.Tail
	for _, h := range l.Tagged(result.TagAcquire) {
		s := capacity.Count{Over: result.TailOver(h, c.slo.Limit), Arrivals: h.TotalCount()}
		t.Seconds = append(t.Seconds, s)
		t.Over, t.Arrivals = t.Over+s.Over, t.Arrivals+s.Arrivals
	}
	return t, nil
}

// dispersion is t's, or 0 where it is 1, for capacity.json's omitempty.
func dispersion(t capacity.Tail) float64 {
	if d := t.Dispersion(); d > 1 {
		return d
	}
	return 0
}

// share is the pooled tail a verdict rests on, as figures: its share
// over the SLO's limit, the 95 % interval of the lock's own, and the share
// the SLO allows.
func (c *Capacity) share(t capacity.Tail) *result.PooledShare {
	lo, hi := t.Interval()
	return &result.PooledShare{Share: t.Share(), Low: lo, High: hi, Allowed: c.slo.TailShare()}
}

// searchTrial is a trial's cell judged against the SLO.
func searchTrial(cell result.Cell, slo result.SLO, rate float64, phase capacity.Phase, full bool, dir string) result.SearchTrial {
	t := result.SearchTrial{Rate: rate, Phase: string(phase), Full: full, DurationS: cell.DurationS,
		LatencyUs: slo.Of(cell.AcquireLatencyUs), AcquiresPerS: cell.AcquiresPerS, Errors: cell.Errors,
		SafetyViolations: cell.SafetyViolations, Unsafe: judge.CellSafety(cell).Bad(), Dir: dir}
	if cell.Open != nil {
		t.Dropped, t.ScheduleLagP99Us = cell.Open.Dropped, cell.Open.ScheduleLagUs.P99
	}
	if g := cell.Generator; g != nil {
		t.OtherCores = g.OtherCores
		if g.WakeLateUs != nil {
			t.WakeLateP99Us = g.WakeLateUs.P99
		}
	}
	v := judge.Trial(cell, slo)
	t.Pass, t.Why = v.Pass(), report.TrialWhy(v)
	return t
}

// sweep finds one implementation's best client count in the closed loop
// (scenario hot) and fits the USL to it.
func (c *Capacity) sweep(ctx context.Context, name string) (result.Knee, error) {
	k := result.Knee{Impl: name, Scenario: "hot"}
	hold, think := c.Base.Cell.Hold, c.Base.Cell.Think
	measure := func(ctx context.Context, n int) (float64, error) {
		cell, dir, err := c.trial(ctx, name, "hot", n, 0, c.Trial, fmt.Sprintf("knee-%03d", n), c.Base.Cell.Config.Seed)
		if err != nil {
			return 0, err
		}
		p := result.KneePoint{Clients: n, AcquiresPerS: cell.AcquiresPerS, P99Us: cell.AcquireLatencyUs.P99,
			Little: judge.LittleCheck(cell, hold, think), Dir: dir}
		if judge.LittleOff(p.Little) { // the note capacity.json keeps, as files before Clients did
			p.Little.Note = report.LittleNote(p.Little)
		}
		k.Points = append(k.Points, p)
		if c.OnKneePoint != nil {
			c.OnKneePoint(name, p)
		}
		return cell.AcquiresPerS, nil
	}
	pts, err := capacity.Sweep(ctx, measure, c.MaxClients)
	if err != nil {
		return k, err
	}
	// Refinement measured some points out of order.
	slices.SortFunc(k.Points, func(a, b result.KneePoint) int { return a.Clients - b.Clients })
	u, err := capacity.FitUSL(pts)
	if err != nil {
		k.Note = err.Error()
		return k, nil
	}
	k.Fit = &result.USLFit{Lambda: u.Lambda, Sigma: u.Sigma, Kappa: u.Kappa, NStar: u.NStar(), Peak: u.Peak(), R2: u.R2}
	if k.Fit.Kappa == 0 {
		k.Fit.NStar = 0 // JSON has no infinity: 0 says no peak
	} else {
		// σ near 1 puts √((1−σ)/κ) below one client: the best is one.
		k.Fit.NStar = max(k.Fit.NStar, 1)
	}
	return k, nil
}

// maxTailLength bounds how far tailLength lengthens a trial.
const maxTailLength = time.Minute

// tailLength is how long a trial at rate must last for the SLO's
// quantile to rest on ten arrivals above it (a thousand for a p99):
// a 2 s trial at 100/s holds 200, whose p99 is the second slowest
// arrival, and passes or fails by chance. At most maxTailLength.
func tailLength(rate float64, slo result.SLO) time.Duration {
	share := slo.TailShare()
	if share == 0 { // max, mean: as a p99
		share = 0.01
	}
	need := 10 / share / rate
	return min(time.Duration(need*float64(time.Second)), maxTailLength)
}

// quietWait bounds how long a search waits for a busy machine to quieten
// before it repeats a trial the machine failed.
const quietWait = 30 * time.Second

// waitQuiet waits, second by second, until the machine's other work
// keeps at most OthersShare of its cores busy (between trials lockbench
// and its servers are idle, so all of it is other work), or at most
// bound: on a shared machine others' builds and tests come and go within
// a minute, and a repeat in the middle of one would end the search on
// them.
func (c *Capacity) waitQuiet(ctx context.Context, bound time.Duration) {
	limit := c.OthersShare * float64(runtime.NumCPU())
	deadline := time.Now().Add(bound)
	said := false
	for time.Now().Before(deadline) {
		t0, ok := engine.MachineCPU()
		if !ok {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		t1, _ := engine.MachineCPU()
		if (t1 - t0).Seconds() <= limit {
			return
		}
		if !said && c.OnBusy != nil {
			c.OnBusy(bound)
			said = true
		}
	}
}
