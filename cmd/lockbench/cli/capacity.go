package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/capacity"
	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/plan"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
)

const capacitySynopsis = `capacity [flags]

Answers capacity directly, per implementation: the highest arrival rate
(open loop, Poisson arrivals, latency from each arrival's intended start)
that meets --slo with no arrival dropped and errors within 1%, and the
client count where a closed loop stops gaining (the Universal Scalability
Law fitted to a sweep of clients). The rate is bracketed by doubling,
bisected with short trials (--trial, lengthened to hold ten arrivals above
the SLO's quantile) to --precision, then confirmed: a full --duration
trial at the answer must pass and one a step above it must fail. Near
the answer a p99 rests on the few slowest arrivals: a trial whose share
of arrivals over the limit is too close to the allowed 1% to call at 95%
is pooled with more trials at the same rate (up to --max-arrivals), and
when even those cannot call it the answer comes with the range of rates
its trials' tails decided. A trial failed by lockbench itself or by other work on the machine is repeated
once (after waiting up to 30 s for the machine to quieten), then ends the
search, which says so rather than claim a capacity. Every trial is a cell
kept under DIR/trials; DIR/capacity.json holds the answer.

Examples:
  lockbench capacity --impl redis
  lockbench capacity --impl redis,zk-pred --slo 'p99<=2ms' --precision 10% --trial 1s --duration 5s
  lockbench capacity --impl zk-naive,zk-pred --find knee --max-clients 128
  lockbench capacity --impl redis --find rate --format json | jq '.searches[0].rate'

Exit status: 0 ok, 1 runtime failure, 2 usage, 3 a mutual-exclusion
violation, 5 a search found no rate that met the SLO, 130 interrupted.`

// capOpts holds capacity's own flags; the cell's flags (servers, driver
// options, --hold, --locks…) are run's, read by runFlags.
type capOpts struct {
	run                  runOpts
	find, precision      string
	others               string
	trial, maxTime       time.Duration
	start, maxRate       float64
	inflight, maxClients int
	maxTrials            int
	maxArrivals          int64
}

// capacityRefused are run's flags a capacity search sets itself or
// cannot honour.
var capacityRefused = []string{"scenario", "clients", "rate", "ramp", "acquires", "repeat", "start-at", "shard-wait", "run-id"}

func capacityFlags(o *capOpts, help io.Writer) *pflag.FlagSet {
	fs := runFlags(&o.run, help)
	fs.Usage = func() {
		fs.VisitAll(placeholder)
		fmt.Fprintf(fs.Output(), "Usage: lockbench %s\n\nFlags:\n%s", capacitySynopsis, fs.FlagUsages())
	}
	for _, name := range capacityRefused {
		fs.MarkHidden(name)
	}
	fs.Lookup("slo").DefValue = "p99<=10ms"
	fs.Lookup("slo").Usage = "`THRESHOLDS` the answer must meet, e.g. 'p99<=2ms,errors<=0.1%'"
	fs.Lookup("slo").Value.Set("p99<=10ms")
	fs.Lookup("duration").Usage = "length of each confirmation trial (and of each trial once short ones proved optimistic)"
	// Independent callers meet at a lock by chance; evenly spaced arrivals
	// meet only when something stalls a cycle, so with them the answer
	// measures how often the machine stalls (see README, Why the tail jumps).
	fs.Lookup("arrival").DefValue = "poisson"
	fs.Lookup("arrival").Value.Set("poisson")
	fs.Lookup("arrival").Usage = "`KIND` of arrivals: poisson (independent callers) or constant (evenly spaced)"
	fs.StringVar(&o.find, "find", "rate,knee", "`WHAT` to find, comma-separated: rate (highest arrival rate at --slo), knee (best client count, USL fit)")
	fs.StringVar(&o.precision, "precision", "5%", "bisect until the bracket is this narrow, as `PERCENT` of the answer")
	fs.StringVar(&o.others, "others-share", "10%", "`PERCENT` of the cores other processes may keep busy before a failed trial is blamed on the machine, not the lock (100% judges every trial by the lock)")
	fs.DurationVar(&o.trial, "trial", 2*time.Second, "length of each bracketing and bisecting trial, and of each knee cell")
	fs.Float64Var(&o.start, "start-rate", 500, "first arrival rate tried, per second")
	fs.Float64Var(&o.maxRate, "max-rate", 200000, "highest arrival rate tried, per second")
	fs.IntVar(&o.inflight, "inflight", 32, "rate: clients serving arrivals (each its own connection), and the bound on those in flight")
	fs.IntVar(&o.maxClients, "max-clients", 64, "knee: largest client count swept (1, 2, 4, … then refined around the peak)")
	fs.IntVar(&o.maxTrials, "max-trials", 60, "bound on the trials of one search")
	fs.Int64Var(&o.maxArrivals, "max-arrivals", 0, "pool trials at one rate while their share of arrivals over the SLO's limit is too close to call at 95%, up to `N` arrivals (default four trials' worth: 4000 for a p99)")
	fs.DurationVar(&o.maxTime, "max-time", 30*time.Minute, "bound on the whole command's time")
	return fs
}

func capacityCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o capOpts
	fs := capacityFlags(&o, stdout)
	if err := parse(fs, args); err != nil {
		return err
	}
	c, err := o.check(fs)
	if err != nil {
		return err
	}
	had := c.base.Out != "" && existed(c.base.Out)
	if c.base.Out, err = outDir(c.base.Out, o.run.force); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.maxTime)
	defer cancel()
	rep, err := c.run(ctx, stderr)
	if rep == nil {
		dropUnused(c.base.Out, had)
		return err
	}
	if werr := c.write(rep, stdout, stderr); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	return capacityOutcome(rep)
}

// capacityOutcome is the error a finished search exits with: a safety
// violation in any trial, or a search without a passing rate.
func capacityOutcome(rep *result.CapacityReport) error {
	var none, stopped []string
	for _, s := range rep.Searches {
		for _, t := range s.Trials {
			if strings.Contains(t.Why, "safety violation") {
				return fmt.Errorf("%w in %s (trial %s)", errUnsafe, s.Impl, t.Dir)
			}
		}
		switch {
		case s.Rate == 0 && s.Limit != "":
			stopped = append(stopped, s.Impl)
		case s.Rate == 0:
			none = append(none, s.Impl)
		}
	}
	if len(stopped) > 0 {
		// Not the SLO missed: no trial measured the lock.
		return noClaim(fmt.Sprintf("no capacity claimed for %s: the trials stopped measuring the lock (see the verdict)", strings.Join(stopped, ", ")))
	}
	if len(none) > 0 {
		return fmt.Errorf("%w: no rate met %s for %s", errSLO, rep.SLO, strings.Join(none, ", "))
	}
	return nil
}

// capRun is a capacity command checked and ready to run.
type capRun struct {
	o         capOpts
	base      plan.Plan
	slo       result.SLO
	precision float64
	others    float64 // --others-share, a fraction
	rate      bool
	knee      bool
}

// check reads the flags into a base plan, judged by Plan.Validate as a
// trial would be.
func (o capOpts) check(fs *pflag.FlagSet) (*capRun, error) {
	base, err := o.run.plan.Plan(fs)
	if err != nil {
		return nil, err
	}
	if base.Shard != nil {
		return nil, fmt.Errorf("%w: capacity across shards is not supported yet; run it unsharded against the same servers", errUsage)
	}
	for _, name := range capacityRefused {
		if fs.Changed(name) {
			return nil, fmt.Errorf("%w: capacity sets --%s itself; see --inflight, --max-clients, --start-rate", errUsage, name)
		}
	}
	if err := checkFormat(o.run.format); err != nil {
		return nil, err
	}
	if o.run.format == "csv" {
		return nil, fmt.Errorf("%w: capacity writes --format table or json", errUsage)
	}
	c := &capRun{o: o}
	for _, w := range strings.Split(o.find, ",") {
		switch strings.TrimSpace(w) {
		case "":
		case "rate":
			c.rate = true
		case "knee":
			c.knee = true
		default:
			return nil, fmt.Errorf("%w: --find %q: want rate, knee or both", errUsage, w)
		}
	}
	if !c.rate && !c.knee {
		return nil, fmt.Errorf("%w: --find names nothing to find", errUsage)
	}
	p, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(o.precision), "%"), 64)
	if err != nil || !(p > 0 && p <= 50) {
		return nil, fmt.Errorf("%w: --precision %q: want a percentage above 0 and at most 50, e.g. 5%%", errUsage, o.precision)
	}
	c.precision = p / 100
	s, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(o.others), "%"), 64)
	if err != nil || !(s >= 0 && s <= 100) {
		return nil, fmt.Errorf("%w: --others-share %q: want a percentage from 0 to 100, e.g. 10%%", errUsage, o.others)
	}
	c.others = s / 100
	if c.slo, err = result.ParseSLO(base.SLO); err != nil {
		return nil, fmt.Errorf("%w: --slo: %v", errUsage, err)
	}
	switch {
	case o.trial <= 0 || base.Cell.Duration <= 0:
		return nil, fmt.Errorf("%w: --trial and --duration must be positive", errUsage)
	case !(o.start >= 1 && o.maxRate >= o.start && o.maxRate <= 1e7):
		return nil, fmt.Errorf("%w: want 1 ≤ --start-rate ≤ --max-rate ≤ 10000000, got %g and %g", errUsage, o.start, o.maxRate)
	case o.inflight < 1 || o.maxClients < 1 || o.maxTrials < 3 || o.maxTime <= 0:
		return nil, fmt.Errorf("%w: --inflight and --max-clients must be ≥ 1, --max-trials ≥ 3, --max-time positive", errUsage)
	case o.maxArrivals < 0 || fs.Changed("max-arrivals") && o.maxArrivals == 0:
		return nil, fmt.Errorf("%w: --max-arrivals must be a positive count of arrivals, got %d", errUsage, o.maxArrivals)
	case fs.Changed("max-arrivals") && c.slo.TailShare() == 0:
		return nil, fmt.Errorf("%w: --max-arrivals pools trials by their share of arrivals over a quantile; --slo %s has none (max, mean)", errUsage, c.slo)
	}
	base.Clients = []int{max(o.inflight, o.maxClients)}
	base.Scenarios, base.Cell.Rate = []string{"rate"}, o.start
	c.base = base
	c.base.SLO = c.slo.String()
	if c.knee { // validate the knee's scenario as well as the rate's
		c.base.Scenarios = []string{"rate", "hot"}
	}
	if err := c.base.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// run starts the servers once and runs each implementation's searches
// over them; the report holds what was found even when a later search
// failed.
func (c *capRun) run(ctx context.Context, stderr io.Writer) (*result.CapacityReport, error) {
	servers, sandboxed, stop, dead, err := plan.Provision(ctx, c.base)
	if err != nil {
		return nil, err
	}
	defer stop()
	if len(sandboxed) > 0 {
		fmt.Fprintf(stderr, "lockbench %s — sandbox: %s\n", plan.Version, plan.DescribeServers(servers, sandboxed))
	}
	c.base.Cell.Config.Servers = servers
	rep := &result.CapacityReport{Schema: result.SchemaVersion, Version: plan.Version, Started: time.Now().UTC(),
		SLO: c.slo.String(), Precision: c.precision}
	for _, name := range c.base.Impls {
		if c.rate {
			s, err := c.search(ctx, name, stderr)
			rep.Searches = append(rep.Searches, s)
			if err != nil {
				return rep, c.failed(rep, err, dead)
			}
		}
		if c.knee {
			k, err := c.sweep(ctx, name, stderr)
			rep.Knees = append(rep.Knees, k)
			if err != nil {
				return rep, c.failed(rep, err, dead)
			}
		}
	}
	return rep, nil
}

// failed notes why the command ended early, naming dead servers.
func (c *capRun) failed(rep *result.CapacityReport, err error, dead func() []string) error {
	if d := dead(); len(d) > 0 {
		err = errors.Join(err, fmt.Errorf("lockbench: sandboxed server died during the search: %s", strings.Join(d, ", ")))
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("lockbench: capacity: --max-time %v reached: %w", c.o.maxTime, err)
	}
	rep.Failure = err.Error()
	return err
}

// trial runs one cell through plan.Run into its own directory under
// DIR/trials and returns its summarised cell and directory.
func (c *capRun) trial(ctx context.Context, name, scenario string, clients int, rate float64, d time.Duration, sub string, seed uint64) (result.Cell, string, error) {
	p := c.base
	p.Impls, p.Scenarios, p.Clients = []string{name}, []string{scenario}, []int{clients}
	p.Cell.Rate, p.Cell.Duration, p.Cell.Acquires = rate, d, 0
	p.Cell.Config.Seed = seed
	if scenario != "rate" {
		p.Cell.Rate, p.Cell.MaxInflight = 0, 0
	}
	rel := filepath.Join(result.TrialsDir, name, sub)
	p.Out = filepath.Join(c.base.Out, rel)
	sum, err := plan.Run(ctx, p)
	if sum == nil || len(sum.Cells) == 0 {
		if err == nil {
			err = fmt.Errorf("lockbench: %s %s: the trial produced no cell", name, scenario)
		}
		return result.Cell{}, rel, err
	}
	return sum.Cells[0], rel, err
}

// write puts capacity.json and the plots in the results directory and
// the answer on stdout.
func (c *capRun) write(rep *result.CapacityReport, stdout, stderr io.Writer) error {
	if err := result.WriteJSON(filepath.Join(c.base.Out, result.CapacityFile), rep); err != nil {
		return err
	}
	plots, perr := report.RenderCapacity(c.base.Out, rep)
	if c.o.run.format == formatJSON {
		if err := writeJSON(stdout, rep); err != nil {
			return err
		}
	} else {
		report.WriteCapacitySearch(stdout, rep)
	}
	for _, p := range plots {
		fmt.Fprintf(stderr, "plot: %s\n", p)
	}
	fmt.Fprintf(stderr, "results: %s\n", filepath.Join(c.base.Out, result.CapacityFile))
	if perr != nil {
		return fmt.Errorf("report: %w", perr)
	}
	return nil
}

// search finds one implementation's highest rate at the SLO.
func (c *capRun) search(ctx context.Context, name string, stderr io.Writer) (result.CapacitySearch, error) {
	began := time.Now()
	out := result.CapacitySearch{Impl: name, Scenario: "rate", MaxArrivals: c.maxArrivals()}
	if d, ok := impl.Lookup(name); ok && d.Wait != nil {
		out.Wait = d.Wait(c.base.Cell.Config)
	}
	busy := false // the last trial failed on a busy machine
	trial := func(ctx context.Context, rate float64, phase capacity.Phase, full bool) (capacity.Outcome, error) {
		if busy {
			waitQuiet(ctx, quietWait, c.others, stderr)
		}
		d := c.o.trial
		if full {
			d = c.base.Cell.Duration
		}
		d = max(d, tailLength(rate, c.slo))
		// Each trial draws arrivals of its own (--seed plus its number):
		// trials pooled at one rate are then samples of the lock, not the
		// same arrivals again, and a search is still repeatable.
		n := len(out.Trials) + 1
		cell, dir, err := c.trial(ctx, name, "rate", c.o.inflight, rate, d, fmt.Sprintf("%02d-%s-%.0f", n, phase, rate), c.base.Cell.Config.Seed+uint64(n))
		if err != nil {
			return capacity.Outcome{}, err
		}
		t := searchTrial(cell, c.slo, rate, phase, full, dir)
		if !t.Pass {
			t.Limit = result.TrialLimit(cell, c.slo, c.others)
		}
		busy = strings.HasPrefix(t.Limit, result.MachineBusyPrefix)
		o := capacity.Outcome{Pass: t.Pass, Why: t.Why, Limit: t.Limit, Besides: result.JudgeTrialBesidesTail(cell, c.slo)}
		if tail, err := c.tail(dir, cell); err != nil {
			return o, err
		} else if tail.Arrivals > 0 {
			o.Tail = tail
			t.Over, t.Arrivals, t.Dispersion = tail.Over, tail.Arrivals, dispersion(tail)
		}
		out.Trials = append(out.Trials, t)
		return o, nil
	}
	tell := func(st capacity.Step) { // the trial's verdict, pooled with those before it
		t := &out.Trials[len(out.Trials)-1]
		if st.Pool > 0 {
			t.Pool, t.PooledOver, t.PooledArrivals, t.Decided = st.Pool, st.Pooled.Over, st.Pooled.Arrivals, st.Decided
			t.PooledDispersion = dispersion(st.Pooled)
			if t.Pass != st.Pass || st.Pool > 1 {
				t.Pass, t.Why = st.Pass, pooledWhy(st.Pooled, c.slo)
			}
		}
		fmt.Fprintf(stderr, "%s  %-7s %s  %s\n", name, st.Phase, report.DescribeTrial(*t, c.slo), t.Dir)
	}
	ans, err := capacity.Search(ctx, trial, capacity.Options{
		Start: c.o.start, Max: c.o.maxRate, Precision: c.precision, MaxTrials: c.o.maxTrials,
		Allowed: c.slo.TailShare(), MaxArrivals: out.MaxArrivals, Report: tell,
	})
	out.Rate, out.Confirmed, out.Missed, out.Limit, out.Note = ans.Rate, ans.Confirmed, ans.Missed, ans.Limit, ans.Note
	out.Low, out.High, out.Sampled = ans.Low, ans.High, ans.Sampled
	if err != nil && out.Note == "" { // else the verdict would read as a finished search's
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			out.Note = fmt.Sprintf("--max-time %v ran out mid-search", c.o.maxTime)
		case errors.Is(err, context.Canceled):
			out.Note = "interrupted mid-search"
		default:
			out.Note = "ended by an error mid-search"
		}
	}
	poolVerdicts(out.Trials, ans.Steps)
	for _, t := range out.Trials { // the latency at the answer: its last passing trial
		if t.Pass && t.Rate == ans.Rate {
			out.LatencyUs = t.LatencyUs
		}
	}
	out.WallS = time.Since(began).Seconds()
	return out, err
}

// poolVerdicts gives each trial of a pool the pool's verdict, as the
// search judged it (the report printed each as it ended, with the pool so
// far).
func poolVerdicts(ts []result.SearchTrial, steps []capacity.Step) {
	for j := len(steps) - 1; j >= 0 && j < len(ts); j-- {
		last := steps[j]
		for i := j - 1; i >= 0 && i > j-last.Pool; i-- {
			if ts[i].Pass != last.Pass {
				ts[i].Pass, ts[i].Why = last.Pass, ts[j].Why
			}
		}
		if last.Pool > 1 {
			j -= last.Pool - 1
		}
	}
}

// maxArrivals bounds the arrivals pooled at one rate (--max-arrivals, by
// default four trials' worth: 4,000 for a p99); 0 when the SLO's quantile
// is not a share of arrivals (max, mean).
func (c *capRun) maxArrivals() int64 {
	share := c.slo.TailShare()
	switch {
	case share == 0:
		return 0
	case c.o.maxArrivals > 0:
		return c.o.maxArrivals
	}
	return int64(math.Ceil(40 / share))
}

// acquired reads back a trial's acquire latencies (from the intended
// start) from its interval log; nil when it wrote none.
func (c *capRun) tail(dir string, cell result.Cell) (capacity.Tail, error) {
	l, err := result.ReadCellLog(filepath.Join(c.base.Out, dir), cell)
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

// pooledWhy says what a pooled tail shows against the SLO.
func pooledWhy(t capacity.Tail, slo result.SLO) string {
	lo, hi := t.Interval()
	bursts := ""
	if d := t.Dispersion(); d > 1 {
		bursts = fmt.Sprintf(", in bursts: worth %.0f independent", float64(t.Arrivals)/d)
	}
	return fmt.Sprintf("%d of %d arrivals over %s%s: %.2f%% (95%%: %.2f–%.2f%%) against %g%%",
		t.Over, t.Arrivals, slo.Limit, bursts, 100*t.Share(), 100*lo, 100*hi, 100*slo.TailShare())
}

// searchTrial is a trial's cell judged against the SLO.
func searchTrial(cell result.Cell, slo result.SLO, rate float64, phase capacity.Phase, full bool, dir string) result.SearchTrial {
	t := result.SearchTrial{Rate: rate, Phase: string(phase), Full: full, DurationS: cell.DurationS,
		LatencyUs: slo.Of(cell.AcquireLatencyUs), AcquiresPerS: cell.AcquiresPerS, Errors: cell.Errors, Dir: dir}
	if cell.Open != nil {
		t.Dropped, t.ScheduleLagP99Us = cell.Open.Dropped, cell.Open.ScheduleLagUs.P99
	}
	if g := cell.Generator; g != nil {
		t.OtherCores = g.OtherCores
		if g.WakeLateUs != nil {
			t.WakeLateP99Us = g.WakeLateUs.P99
		}
	}
	t.Pass, t.Why = result.JudgeTrial(cell, slo)
	return t
}

// sweep finds one implementation's best client count in the closed loop
// (scenario hot) and fits the USL to it.
func (c *capRun) sweep(ctx context.Context, name string, stderr io.Writer) (result.Knee, error) {
	k := result.Knee{Impl: name, Scenario: "hot"}
	hold, think := c.base.Cell.Hold, c.base.Cell.Think
	measure := func(ctx context.Context, n int) (float64, error) {
		cell, dir, err := c.trial(ctx, name, "hot", n, 0, c.o.trial, fmt.Sprintf("knee-%03d", n), c.base.Cell.Config.Seed)
		if err != nil {
			return 0, err
		}
		p := result.KneePoint{Clients: n, AcquiresPerS: cell.AcquiresPerS, P99Us: cell.AcquireLatencyUs.P99,
			Little: result.LittleCheck(cell, hold, think), Dir: dir}
		k.Points = append(k.Points, p)
		fmt.Fprintf(stderr, "%s  knee    %d clients  %.0f acq/s  p99 %s  %s\n", name, n, p.AcquiresPerS, result.Dur(p.P99Us), dir)
		if p.Little.Note != "" {
			fmt.Fprintf(stderr, "note: %s %d clients: %s\n", name, n, p.Little.Note)
		}
		return cell.AcquiresPerS, nil
	}
	pts, err := capacity.Sweep(ctx, measure, c.o.maxClients)
	if err != nil {
		return k, err
	}
	sortKnee(&k)
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

// sortKnee orders a sweep's points by client count: refinement measured
// some out of order.
func sortKnee(k *result.Knee) {
	slices.SortFunc(k.Points, func(a, b result.KneePoint) int { return a.Clients - b.Clients })
}

// noClaim is a search that ended without measuring the lock: it exits as
// a search without a passing rate does (5), but says so instead of
// calling the SLO missed.
type noClaim string

func (e noClaim) Error() string { return string(e) }
func (e noClaim) Unwrap() error { return errSLO }

// maxTailLength bounds how far tailLength lengthens a trial.
const maxTailLength = time.Minute

// tailLength is how long a trial at rate must last for the SLO's
// quantile to rest on ten arrivals above it (a thousand for a p99):
// a 2 s trial at 100/s holds 200, whose p99 is the second slowest
// arrival, and passes or fails by chance. At most maxTailLength.
func tailLength(rate float64, slo result.SLO) time.Duration {
	q := map[string]float64{"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99, "p999": 0.999, "p9999": 0.9999}[slo.Quantile]
	if q == 0 { // max, mean: as a p99
		q = 0.99
	}
	need := 10 / (1 - q) / rate
	return min(time.Duration(need*float64(time.Second)), maxTailLength)
}

// quietWait bounds how long a search waits for a busy machine to quieten
// before it repeats a trial the machine failed.
const quietWait = 30 * time.Second

// waitQuiet waits, second by second, until the machine's other work
// keeps at most share of its cores busy (between
// trials lockbench and its servers are idle, so all of it is other
// work), or at most bound: on a shared machine others' builds and tests
// come and go within a minute, and a repeat in the middle of one would
// end the search on them.
func waitQuiet(ctx context.Context, bound time.Duration, share float64, stderr io.Writer) {
	limit := share * float64(runtime.NumCPU())
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
		if !said {
			fmt.Fprintf(stderr, "the machine is busy with other work: waiting up to %v for it to quieten\n", bound)
			said = true
		}
	}
}
