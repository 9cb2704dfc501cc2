package cli

import (
	"cmp"
	"context"
	"fmt"
	"github.com/lockbench/lockbench/impl"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

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
search, which says so rather than claim a capacity; one that passed there
is unknown, counted by its pool neither as a pass nor as a failure. Once
a full trial failed, the search goes on with full trials only, and the
answer stays below every rate a full trial failed. The answer comes with
its interval, "answer 1,200/s [1,100, 1,300]" (the range the tails
decided, else the highest passing and lowest failing rate), and the
SLO's quantile there with its 95% interval from the pooled trials.
Every trial is a cell kept under DIR/trials; DIR/capacity.json holds the
answer.

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
	repeats              int
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
	fs.IntVar(&o.repeats, "repeats", 3, "rate: rounds of full trials at the answer and at the rate that missed, in turn, after the search; where they disagree the answer is unstable and its interval spans the rates the server moved across (0: none)")
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
	had := c.Base.Out != "" && existed(c.Base.Out)
	if c.Base.Out, err = outDir(c.Base.Out, o.run.force); err != nil {
		return err
	}
	c.OnServers = func(s impl.Servers, sandboxed []string) {
		if len(sandboxed) > 0 {
			fmt.Fprintf(stderr, "lockbench %s — sandbox: %s\n", plan.Version, plan.DescribeServers(s, sandboxed))
		}
	}
	c.OnTrial = func(name string, t result.SearchTrial, slo result.SLO) {
		fmt.Fprintf(stderr, "%s  %-7s %s  %s\n", name, t.Phase, report.DescribeTrial(t, slo), t.Dir)
	}
	c.OnKneePoint = func(name string, p result.KneePoint) {
		fmt.Fprintf(stderr, "%s  knee    %d clients  %.0f acq/s  p99 %s  %s\n", name, p.Clients, p.AcquiresPerS, result.Dur(p.P99Us), p.Dir)
		if p.Little.Note != "" {
			fmt.Fprintf(stderr, "note: %s %d clients: %s\n", name, p.Clients, p.Little.Note)
		}
	}
	c.OnBusy = func(wait time.Duration) {
		fmt.Fprintf(stderr, "the machine is busy with other work: waiting up to %v for it to quieten\n", wait)
	}
	rep, err := plan.RunCapacity(ctx, *c)
	if rep == nil {
		dropUnused(c.Base.Out, had)
		return err
	}
	if werr := writeSearch(c.Base.Out, o.run.format, rep, stdout, stderr); werr != nil && err == nil {
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
			if t.Unsafe || t.SafetyViolations > 0 { // files before Unsafe hold the count alone
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

// check reads the flags into a capacity search; plan.Capacity.Validate
// judges its numbers and its base plan as a trial would be.
func (o capOpts) check(fs *pflag.FlagSet) (*plan.Capacity, error) {
	base, err := o.run.plan.Plan(fs)
	if err != nil {
		return nil, err
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
	c := &plan.Capacity{Base: base, Trial: o.trial, StartRate: o.start, MaxRate: o.maxRate, Inflight: o.inflight,
		MaxClients: o.maxClients, MaxTrials: o.maxTrials, Repeats: o.repeats, MaxArrivals: o.maxArrivals, MaxTime: o.maxTime}
	for _, w := range strings.Split(o.find, ",") {
		switch strings.TrimSpace(w) {
		case "":
		case "rate":
			c.Rate = true
		case "knee":
			c.Knee = true
		default:
			return nil, fmt.Errorf("%w: --find %q: want rate, knee or both", errUsage, w)
		}
	}
	var perr error
	c.Precision, err = percent("precision", o.precision)
	c.OthersShare, perr = percent("others-share", o.others)
	switch {
	case err != nil || perr != nil:
		return nil, cmp.Or(err, perr) // one line: the first
	case o.trial <= 0 || o.maxTime <= 0:
		return nil, fmt.Errorf("%w: --trial and --max-time must be positive", errUsage)
	case fs.Changed("max-arrivals") && o.maxArrivals == 0:
		return nil, fmt.Errorf("%w: --max-arrivals must be a positive count of arrivals, got 0", errUsage)
	case c.Precision == 0:
		return nil, fmt.Errorf("%w: --precision %q: want a percentage above 0 and at most 50, e.g. 5%%", errUsage, o.precision)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// writeSearch renders the plots beside capacity.json and puts the
// answer on stdout.
func writeSearch(out, format string, rep *result.CapacityReport, stdout, stderr io.Writer) error {
	plots, perr := report.RenderCapacity(out, rep)
	if format == formatJSON {
		if err := writeJSON(stdout, rep); err != nil {
			return err
		}
	} else {
		report.WriteCapacitySearch(stdout, rep)
	}
	for _, p := range plots {
		fmt.Fprintf(stderr, "plot: %s\n", p)
	}
	fmt.Fprintf(stderr, "results: %s\n", filepath.Join(out, result.CapacityFile))
	if perr != nil {
		return fmt.Errorf("report: %w", perr)
	}
	return nil
}

// noClaim is a search that ended without measuring the lock: it exits as
// a search without a passing rate does (5), but says so instead of
// calling the SLO missed.
type noClaim string

func (e noClaim) Error() string { return string(e) }
func (e noClaim) Unwrap() error { return errSLO }
