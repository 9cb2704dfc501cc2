package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/dist"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// CellSpec describes one cell: an implementation under a scenario with a
// number of clients. Zero values mean the defaults stated beside each field.
type CellSpec struct {
	Impl string
	// Driver is the implementation Impl names, resolved once by Validate
	// and carried from then on; a spec given a Driver needs no Impl.
	Driver impl.Driver
	// Scenario is the load shape. Default hot.
	Scenario Scenario
	Clients  int
	// Locks is the number of lock names; client i uses lock i mod Locks.
	// Default 1 (all clients contend on one lock).
	Locks int
	// Duration is the measured time of a closed-loop cell. Exactly one of
	// Duration and Acquires is set for closed loops; burst ignores both.
	Duration time.Duration
	// Acquires is the number of measured acquisitions, shared by all clients.
	Acquires int64
	// Warmup runs before measuring; nothing in it is recorded.
	Warmup time.Duration
	Hold   time.Duration // time each holder keeps the lock (see HoldDist)
	Think  time.Duration // pause between release and the next acquire
	// HoldDist and ThinkDist, when set, draw each hold and think time
	// (exp:5ms, uniform:1ms-10ms); otherwise Hold and Think are fixed.
	HoldDist, ThinkDist dist.Dist
	// Keys picks the lock of each acquisition in the keys scenario (and in
	// rate with Locks > 1). Default uniform.
	Keys dist.Keys
	// Rate is the open loop's arrivals per second (scenario rate).
	Rate float64
	// Arrival is ArrivalConstant (default) or ArrivalPoisson.
	Arrival string
	// MaxInflight bounds acquisitions in flight in the open loop; arrivals
	// beyond it are dropped. Default Clients.
	MaxInflight int
	// MaxTime bounds the whole cell, connecting excepted. Default 10m.
	MaxTime time.Duration
	// ConnectParallel bounds concurrent connects. Default 16.
	ConnectParallel int
	// AcquireTimeout, when positive, is how long a client waits for the
	// lock before it gives up (Redisson's tryLock wait, Curator's
	// acquire(time, unit)): its Acquire's context ends then, and the
	// abandonment is counted apart from errors. Default 0: wait until the
	// cell ends.
	AcquireTimeout time.Duration
	// Renew has holders of leases that can be renewed (impl.Renewal)
	// renew them every TTL/3 while they hold the lock.
	Renew bool
	// Guard has every holder read the guarded register (impl.Guard) when
	// it is granted the lock and write it back, plus one, before it
	// releases it, on the first of the driver's servers that keep one
	// (--guard). Default off for load scenarios, whose every hold it
	// lengthens by two round trips; the fault scenarios' default is on.
	Guard bool
	// GuardFunc, if set, opens the register in place of the driver's
	// servers' (tests of the harness with locks that have no servers).
	GuardFunc impl.GuardFunc
	// Repeat is how many times a fault scenario repeats its script, or a
	// repeatable load scenario (burst) runs as one cell.
	// Default 1.
	Repeat int
	// Shard, if set, runs only this process's slice of the clients, lined
	// up with the other shards (see Shard).
	Shard *Shard
	// HistoryOps bounds the operations the cell records for its
	// linearizability check, over all clients. Default DefaultHistoryOps;
	// negative records none.
	HistoryOps int
	// CheckBudget bounds the linearizability check's time; past it the
	// verdict is unknown. Default linear.DefaultBudget.
	CheckBudget time.Duration
	// Config is handed to every client (servers, TTL, retry, seed, …).
	Config impl.Config
	// ServerKinds reads the servers' own counters and the CPU time of
	// those this process started, before and after the cell, by the kinds
	// of the driver's needs (sandbox.Meter is lockbench's). Default nil:
	// the cell reports the clients' figures alone.
	ServerKinds ServerKinds
	// ProcsTrial, when it holds two or more GOMAXPROCS and the warm-up is
	// at least MinTrialWarmup, has the cell try each in turn while it
	// warms up and measure under the one its clients were granted the
	// lock most often with; the first is kept on a near tie. The caller
	// gives GOMAXPROCS back after the cell.
	ProcsTrial []int
	// ProcsWhy, when the caller chose the cell's GOMAXPROCS itself, says
	// how; the cell reports it beside Procs unless a trial chose instead.
	ProcsWhy string
	// Progress, if set, is called about once a second while the cell runs,
	// from a goroutine of its own.
	Progress func(Progress)
	// ProgressEvery is the progress interval. Default 1s.
	ProgressEvery time.Duration
	// OnInterval, if set, receives the cell's intervals as each closes (a
	// second, in time order), with the cell they belong to (its Impl,
	// Scenario and Clients) and the time measuring began; the result
	// then holds none, so a cell's memory does not grow with its length.
	// It is called from one goroutine of the cell's.
	OnInterval func(cell result.Cell, start time.Time, iv hlog.Interval)
	// OnClock, if set, is called with true when the clients start (all are
	// connected) and with false when the last one stops: benchmarks use it
	// to keep connection set-up out of their timer.
	OnClock func(running bool)
}

// Arrival processes of the open loop.
const (
	ArrivalConstant = "constant"
	ArrivalPoisson  = "poisson"
)

// MaxInflight bounds the open loop's acquisitions in flight: the queue of
// arrivals is made that long before the clock starts.
const MaxInflight = 1_000_000

// MaxRate bounds the open loop's arrivals per second: beyond it the
// generator's own timer resolution is the measurement.
const MaxRate = 1e6

// Defaults for CellSpec.
const (
	DefaultMaxCellTime     = 10 * time.Minute
	DefaultConnectParallel = 16
	// DefaultSettleTimeout bounds one burst hand-off's wait for waiters.
	DefaultSettleTimeout = 30 * time.Second
)

// Progress is a cell's state while it runs.
type Progress struct {
	Warmup         bool          // still warming up: nothing is recorded yet
	Elapsed, Total time.Duration // measured time so far and planned (0 if unknown)
	Acquires       int64
	Errors         int64
	AcquiresPerS   float64
	P99Us          float64 // approximate (±12%), from a coarse live histogram
	// Holding and Waiting count the clients holding the lock and those
	// inside an acquire at the moment of the snapshot (see clientStates).
	Holding, Waiting int64
	// Counts are the clients' counters summed, warm-up included (the
	// result's are from the end of the warm-up), and Abandons the
	// acquisitions given up while measuring; see liveCounts.
	Counts   result.Counts
	Abandons int64
}

// ErrUsage is wrapped by errors about a spec that cannot run as given.
var ErrUsage = errors.New("lockbench: usage")

func newHist() *hdrhistogram.Histogram { return impl.NewHistogram() }

// RunCell connects the clients, runs the cell and returns its result. Client
// connections are made, with bounded parallelism, before the clock starts.
func RunCell(ctx context.Context, spec CellSpec) (result.Cell, error) {
	if spec.OnInterval == nil {
		// The timeline is not returned: let it go as it closes.
		spec.OnInterval = func(result.Cell, time.Time, hlog.Interval) {}
	}
	res, err := RunCellDetail(ctx, spec)
	return res.Cell, err
}

// Result is a cell's summary with its timeline.
type Result struct {
	result.Cell
	// Start is when measuring began; Intervals are the seconds after it.
	Start     time.Time
	Intervals []hlog.Interval
	// Distributions are the implementation's own histograms, merged over
	// clients, that Cell.Distributions summarises: what repeats of a
	// cell merge (a summary does not).
	Distributions map[string]*hdrhistogram.Histogram
}

// RunCellDetail is RunCell that also returns the cell's per-second
// histograms, from which a run writes the cell's interval log.
func RunCellDetail(ctx context.Context, spec CellSpec) (res Result, err error) {
	if err := spec.Validate(); err != nil {
		return Result{}, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cell impl=%s/scenario=%s/clients=%d: %w: %v", spec.Impl, spec.Scenario.Name(), spec.Clients, ErrPanic, p)
		}
	}()
	res, err = spec.Scenario.Run(ctx, spec)
	res.Cell.Derive()
	return res, err
}

// ErrPanic is wrapped by the error of a cell in which something panicked;
// what the cell measured before is in its result.
var ErrPanic = errors.New("lockbench: panic")

// setUp connects spec.Clients clients and has the first prepare the
// server for spec.Locks names, all before any clock starts. spec must be
// validated.
func setUp(ctx context.Context, spec CellSpec) (impl.Driver, []impl.Locker, error) {
	d := spec.Driver
	lockers, err := connect(ctx, d, spec)
	if err != nil {
		return d, nil, err
	}
	if p, ok := lockers[0].(impl.Preparer); ok {
		if err := p.Prepare(ctx, newLockNames(spec.Locks).all()); err != nil {
			for _, l := range lockers {
				l.Close()
			}
			return d, nil, fmt.Errorf("%s: prepare: %w", d.Name, err)
		}
	}
	return d, lockers, nil
}

// Validate checks the spec — every number, every combination, the
// driver's and the scenario's own options — and fills in the defaults
// stated beside each field. An error wraps ErrUsage and names what to
// change. It touches no server.
func (s *CellSpec) Validate() error {
	if s.Driver.New == nil || s.Driver.Name != s.Impl && s.Impl != "" {
		d, ok := impl.Lookup(s.Impl)
		if !ok {
			return fmt.Errorf("%w: unknown implementation %q (known: %s)", ErrUsage, s.Impl, strings.Join(impl.Names(), ", "))
		}
		s.Driver = d
	}
	s.Driver = s.Driver.For(s.Config)
	s.Impl = s.Driver.Name
	d := s.Driver
	if s.Scenario == nil {
		s.Scenario, _ = LookupScenario("hot")
	}
	if err := s.checkNumbers(); err != nil {
		return err
	}
	s.defaults()
	if err := impl.CheckOptions(append(d.Options, s.Scenario.Options()...), s.Config.Options); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if s.Renew && !d.Caps.Has(impl.Renewal) {
		return fmt.Errorf("%w: --renew: %s's leases cannot be renewed", ErrNotApplicable, d.Name)
	}
	if d.Validate != nil {
		if err := d.Validate(s.Config); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrUsage, d.Name, err)
		}
	}
	if err := s.Scenario.Check(s); err != nil {
		return err
	}
	return s.Shard.check(s)
}

// checkNumbers refuses numbers no cell can run with.
func (s *CellSpec) checkNumbers() error { return s.Check(false) }

// Check refuses numbers no cell can run with, naming the CLI's flag. A
// stated spec — a plan's template, whose every setting the CLI's flags
// carry — is refused a zero where a zero means nothing; a bare CellSpec
// takes that zero for the default. It is the one place a cell's numbers
// are judged.
func (s *CellSpec) Check(stated bool) error {
	c := s.Config
	type rule struct {
		bad  bool
		flag string
		want string
		got  any
	}
	for _, r := range []rule{
		{s.Clients < 1 && !stated, "clients", "a whole number ≥ 1", s.Clients},
		{s.Locks < 0 || stated && s.Locks < 1, "locks", "a whole number ≥ 1", s.Locks},
		{s.Duration < 0, "duration", "a positive duration", s.Duration},
		{s.Acquires < 0, "acquires", "a whole number ≥ 1", s.Acquires},
		{s.Warmup < 0, "warmup", "a duration ≥ 0", s.Warmup},
		{s.AcquireTimeout < 0, "acquire-timeout", "a duration ≥ 0 (0 waits until the cell ends)", s.AcquireTimeout},
		{s.MaxTime < 0 || stated && s.MaxTime == 0, "max-cell-time", "a positive duration", s.MaxTime},
		{stated && s.ConnectParallel < 1, "connect-parallel", "a whole number ≥ 1", s.ConnectParallel},
		{s.Repeat < 0 || stated && s.Repeat < 1, "repeat", "a whole number ≥ 1", s.Repeat},
		{!(s.Rate >= 0 && s.Rate <= MaxRate), "rate", "arrivals per second from 0 to 1e6", s.Rate},
		{s.MaxInflight < 0 || s.MaxInflight > MaxInflight, "max-inflight", "a whole number from 0 (--clients) to 1000000", s.MaxInflight},
		{c.TTL < 0 || stated && c.TTL == 0, "ttl", "a positive duration", c.TTL},
		{c.Retry < 0 || stated && c.Retry == 0, "retry", "a positive duration", c.Retry},
		{c.SessionTimeout < 0 || stated && c.SessionTimeout == 0, "zk-session-timeout", "a positive duration", c.SessionTimeout},
		{c.DialTimeout < 0 || stated && c.DialTimeout == 0, "connect-timeout", "a positive duration", c.DialTimeout},
		// −1 is how a stated spec says "no jitter" (zero means the default).
		{!(c.Jitter >= 0 && c.Jitter <= 1 || stated && c.Jitter == -1 || !stated && c.Jitter < 0), "jitter", "a fraction from 0 to 1", c.Jitter},
	} {
		if r.bad {
			return fmt.Errorf("%w: --%s must be %s, got %v", ErrUsage, r.flag, r.want, r.got)
		}
	}
	switch s.Arrival {
	case "", ArrivalConstant, ArrivalPoisson:
	default:
		return fmt.Errorf("%w: --arrival must be %s or %s, got %q", ErrUsage, ArrivalConstant, ArrivalPoisson, s.Arrival)
	}
	return nil
}

// defaults fills in every zero field that has a default.
func (s *CellSpec) defaults() {
	if s.Locks == 0 {
		s.Locks = 1
	}
	if s.Arrival == "" {
		s.Arrival = ArrivalConstant
	}
	if s.HoldDist.IsZero() {
		s.HoldDist = dist.Fixed(s.Hold)
	}
	if s.ThinkDist.IsZero() {
		s.ThinkDist = dist.Fixed(s.Think)
	}
	if s.Repeat <= 0 {
		s.Repeat = 1
	}
	if s.MaxTime <= 0 {
		s.MaxTime = DefaultMaxCellTime
	}
	if s.ConnectParallel <= 0 {
		s.ConnectParallel = DefaultConnectParallel
	}
	if s.ProgressEvery <= 0 {
		s.ProgressEvery = time.Second
	}
	s.Config = s.Config.WithDefaults()
}

// connect makes one client per simulated client, at most ConnectParallel at
// a time, and returns when every one is ready. On any failure it closes
// those made and returns the first error.
func connect(ctx context.Context, d impl.Driver, spec CellSpec) ([]impl.Locker, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lo, hi := spec.Shard.Range(spec.Clients)
	lockers := make([]impl.Locker, hi-lo)
	sem := make(chan struct{}, spec.ConnectParallel)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for j := range lockers {
		i := lo + j
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			cfg := spec.Config
			cfg.Client, cfg.Clients = i, spec.Clients
			l, err := d.New(ctx, cfg)
			if err != nil {
				once.Do(func() { firstErr = connectError(d.Name, i, err); cancel() })
				return
			}
			lockers[j] = l
		})
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		for _, l := range lockers {
			if l != nil {
				l.Close()
			}
		}
		return nil, firstErr
	}
	return lockers, nil
}

// fairness summarises how acquisitions were shared among clients.
func fairness(per []int64, acq *hdrhistogram.Histogram) *result.Fairness {
	return result.FairnessOf(per, float64(acq.Max()))
}

// distributions merges the implementations' own distributions over clients.
func distributions(ws []*Client) (map[string]*hdrhistogram.Histogram, map[string][]int64) {
	hists := map[string]*hdrhistogram.Histogram{}
	vecs := map[string][]int64{}
	for _, w := range ws {
		d, ok := w.l.(impl.Distributions)
		if !ok {
			continue
		}
		for k, h := range d.Histograms() {
			if hists[k] == nil {
				hists[k] = newHist()
			}
			hists[k].Merge(h)
		}
		for k, v := range d.Vectors() {
			for len(vecs[k]) < len(v) {
				vecs[k] = append(vecs[k], 0)
			}
			for i, n := range v {
				vecs[k][i] += n
			}
		}
	}
	if len(hists) == 0 && len(vecs) == 0 {
		return nil, nil
	}
	return hists, vecs
}

// spreadsOf summarises named histograms in the unit each name ends in.
func spreadsOf(hists map[string]*hdrhistogram.Histogram) map[string]result.Spread {
	spreads := map[string]result.Spread{}
	for k, h := range hists {
		unit := 1.0 // µs
		switch {
		case strings.HasSuffix(k, "_ms"):
			unit = 1e3
		case strings.HasSuffix(k, "_s"):
			unit = 1e6
		}
		spreads[k] = result.Spread{
			Count: h.TotalCount(), Min: float64(h.Min()) / unit, P1: float64(h.ValueAtQuantile(1)) / unit,
			P50: float64(h.ValueAtQuantile(50)) / unit, P99: float64(h.ValueAtQuantile(99)) / unit,
			Max: float64(h.Max()) / unit,
		}
	}
	return spreads
}

// connectError says why client i could not connect; running out of file
// descriptors is said as such, not as an unreachable server.
func connectError(name string, i int, err error) error {
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		return fmt.Errorf("%s client %d: out of file descriptors (too many open files): raise the limit (ulimit -n) or use fewer clients: %w", name, i, err)
	}
	return fmt.Errorf("%s client %d: %w", name, i, err)
}
