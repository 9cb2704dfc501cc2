package plan

import (
	"context"
	"errors"
	"fmt"
	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/judge"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// Capacity is a capacity search over a plan's implementations: per
// implementation, the highest arrival rate that meets the SLO (Rate) and
// the client count where a closed loop stops gaining (Knee). Every trial
// is a one-cell plan made from Base, kept under Base.Out/trials; zero
// values take the defaults stated beside each field.
type Capacity struct {
	// Base is the cell every trial varies (servers, driver options, hold,
	// locks, seed…), the implementations searched in turn, the SLO the
	// answer must meet and the results directory. Its Scenarios, Clients
	// and Rate are the search's to set; Base.Cell.Duration is the length
	// of a confirmation (full) trial.
	Base Plan
	// Rate and Knee say what to find; at least one must be set.
	Rate, Knee bool
	// Precision: bisect until the bracket is this narrow, a fraction of
	// the answer. The default is 0.05.
	Precision float64
	// OthersShare is the share of the cores other processes may keep busy
	// before a failed trial is blamed on the machine, not the lock (1
	// judges every trial by the lock). The default is
	// judge.OtherCoresTolerance, a tenth.
	OthersShare float64
	// Trial is the length of each bracketing and bisecting trial, and of
	// each knee cell; lengthened so that the SLO's quantile rests on ten
	// arrivals (tailLength). The default is 2s.
	Trial time.Duration
	// StartRate is the first arrival rate tried and MaxRate the highest,
	// per second. The defaults are 500 and 200,000.
	StartRate, MaxRate float64
	// Inflight is the clients serving arrivals (each its own connection),
	// and the bound on those in flight. The default is 32.
	Inflight int
	// MaxClients is the largest client count the knee sweeps. The default
	// is 64.
	MaxClients int
	// MaxTrials bounds the trials of one search. The default is 60.
	MaxTrials int
	// Repeats is the rounds of full trials at the answer and at the rate
	// that missed above it, in turn, after the search; where they
	// disagree the answer is unstable and its interval spans the rates
	// they moved across (capacity.Spread). 0 runs none.
	Repeats int
	// MaxArrivals bounds the arrivals pooled at one rate while their tail
	// is too close to call. The default is four trials' worth (4,000 for
	// a p99); it is 0 for an SLO whose quantile is not a share (max, mean).
	MaxArrivals int64
	// MaxTime bounds the whole search. The default is 30m.
	MaxTime time.Duration

	// Optional observers, called from RunCapacity's goroutine.
	OnServers func(s impl.Servers, sandboxed []string)
	// OnTrial hears each trial once its verdict is known, pooled with
	// those before it at the same rate.
	OnTrial func(impl string, t result.SearchTrial, slo result.SLO)
	// OnKneePoint hears each cell of a knee's sweep.
	OnKneePoint func(impl string, p result.KneePoint)
	// OnBusy hears that the machine is busy with other work and the
	// search waits up to wait for it to quieten.
	OnBusy func(wait time.Duration)

	slo       result.SLO
	validated bool
}

// Defaults of Capacity's zero values.
const (
	DefaultCapacityTrial = 2 * time.Second
	DefaultMaxCapacity   = 30 * time.Minute
)

// Validate checks the search's bounds and its base plan as a trial would
// be judged (Plan.Validate), and fills in defaults. Its error wraps
// ErrUsage and names the flag to change.
func (c *Capacity) Validate() error {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Precision, 0.05)
	def(&c.StartRate, 500)
	def(&c.MaxRate, 200000)
	def(&c.OthersShare, judge.OtherCoresTolerance)
	for _, d := range []struct {
		v   *int
		def int
	}{{&c.Inflight, 32}, {&c.MaxClients, 64}, {&c.MaxTrials, 60}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if c.Trial == 0 {
		c.Trial = DefaultCapacityTrial
	}
	if c.MaxTime == 0 {
		c.MaxTime = DefaultMaxCapacity
	}
	if err := c.checkBounds(); err != nil {
		return err
	}
	b := &c.Base
	b.Clients = []int{max(c.Inflight, c.MaxClients)}
	b.Scenarios, b.Cell.Rate = []string{"rate"}, c.StartRate
	b.SLO = c.slo.String()
	if c.Knee { // validate the knee's scenario as well as the rate's
		b.Scenarios = []string{"rate", "hot"}
	}
	if err := b.Validate(); err != nil {
		return err
	}
	c.validated = true
	return nil
}

// checkBounds checks every number of the search, and parses its SLO.
func (c *Capacity) checkBounds() error {
	var err error
	if c.Base.Shard != nil {
		return fmt.Errorf("%w: capacity across shards is not supported yet; run it unsharded against the same servers", engine.ErrUsage)
	}
	if c.slo, err = result.ParseSLO(c.Base.SLO); err != nil {
		return fmt.Errorf("%w: --slo: %v", engine.ErrUsage, err)
	}
	switch {
	case !c.Rate && !c.Knee:
		return fmt.Errorf("%w: --find names nothing to find", engine.ErrUsage)
	case !(c.Precision > 0 && c.Precision <= 0.5):
		return fmt.Errorf("%w: --precision %g%%: want a percentage above 0 and at most 50, e.g. 5%%", engine.ErrUsage, 100*c.Precision)
	case !(c.OthersShare >= 0 && c.OthersShare <= 1):
		return fmt.Errorf("%w: --others-share %g%%: want a percentage from 0 to 100, e.g. 10%%", engine.ErrUsage, 100*c.OthersShare)
	case c.Trial < 0 || c.Base.Cell.Duration <= 0:
		return fmt.Errorf("%w: --trial and --duration must be positive", engine.ErrUsage)
	case !(c.StartRate >= 1 && c.MaxRate >= c.StartRate && c.MaxRate <= 1e7):
		return fmt.Errorf("%w: want 1 ≤ --start-rate ≤ --max-rate ≤ 10000000, got %g and %g", engine.ErrUsage, c.StartRate, c.MaxRate)
	case c.Inflight < 1 || c.MaxClients < 1 || c.MaxTrials < 3 || c.MaxTime < 0:
		return fmt.Errorf("%w: --inflight and --max-clients must be ≥ 1, --max-trials ≥ 3, --max-time positive", engine.ErrUsage)
	case c.Repeats < 0 || c.Repeats > 10:
		return fmt.Errorf("%w: --repeats %d: want 0 (none) to 10 rounds", engine.ErrUsage, c.Repeats)
	case c.MaxArrivals < 0:
		return fmt.Errorf("%w: --max-arrivals must be a positive count of arrivals, got %d", engine.ErrUsage, c.MaxArrivals)
	case c.MaxArrivals > 0 && c.slo.TailShare() == 0:
		return fmt.Errorf("%w: --max-arrivals pools trials by their share of arrivals over a quantile; --slo %s has none (max, mean)", engine.ErrUsage, c.slo)
	}
	return nil
}

// RunCapacity starts the servers once and runs each implementation's
// searches over them, bounded by MaxTime, and writes capacity.json into
// Base.Out (when set). The report holds what was found even when a later
// search failed; it is nil only when nothing ran.
func RunCapacity(ctx context.Context, c Capacity) (*result.CapacityReport, error) {
	if !c.validated {
		if err := c.Validate(); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.MaxTime)
	defer cancel()
	fleet, err := provision(ctx, c.Base)
	if err != nil {
		fleet.close()
		return nil, err
	}
	defer fleet.close()
	if c.OnServers != nil {
		c.OnServers(fleet.servers, fleet.sandboxed)
	}
	c.Base.Cell.Config.Servers = fleet.servers
	rep := &result.CapacityReport{Schema: result.SchemaVersion, Version: Version, Started: time.Now().UTC(),
		SLO: c.slo.String(), Precision: c.Precision}
	err = c.searchAll(ctx, rep)
	if d := fleet.dead(); err != nil && len(d) > 0 {
		err = errors.Join(err, fmt.Errorf("lockbench: sandboxed server died during the search: %s", strings.Join(d, ", ")))
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("lockbench: capacity: --max-time %v reached: %w", c.MaxTime, err)
	}
	if err != nil {
		rep.Failure = err.Error()
	}
	if c.Base.Out != "" {
		if werr := result.WriteJSON(filepath.Join(c.Base.Out, result.CapacityFile), rep); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	return rep, err
}

// searchAll runs each implementation's searches in turn, until one fails.
func (c *Capacity) searchAll(ctx context.Context, rep *result.CapacityReport) error {
	for _, name := range c.Base.Impls {
		if c.Rate {
			s, err := c.search(ctx, name)
			rep.Searches = append(rep.Searches, s)
			if err != nil {
				return err
			}
		}
		if c.Knee {
			k, err := c.sweep(ctx, name)
			rep.Knees = append(rep.Knees, k)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// trial runs one cell through Run into its own directory under
// Base.Out/trials and returns its summarised cell and directory.
func (c *Capacity) trial(ctx context.Context, name, scenario string, clients int, rate float64, d time.Duration, sub string, seed uint64) (result.Cell, string, error) {
	p := c.Base
	p.Impls, p.Scenarios, p.Clients = []string{name}, []string{scenario}, []int{clients}
	p.Cell.Rate, p.Cell.Duration, p.Cell.Acquires = rate, d, 0
	p.Cell.Config.Seed = seed
	if scenario != "rate" {
		p.Cell.Rate, p.Cell.MaxInflight = 0, 0
	}
	p.drivers, p.scenarios = nil, nil // validated again for this cell
	rel := filepath.Join(result.TrialsDir, name, sub)
	p.Out = filepath.Join(c.Base.Out, rel)
	sum, err := Run(ctx, p)
	if sum == nil || len(sum.Cells) == 0 {
		if err == nil {
			err = fmt.Errorf("lockbench: %s %s: the trial produced no cell", name, scenario)
		}
		return result.Cell{}, rel, err
	}
	return sum.Cells[0], rel, err
}
