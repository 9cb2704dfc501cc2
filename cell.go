package lockbench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/scenarios"
)

// CellSpec describes one cell: an implementation under a scenario with a
// number of clients. Zero values mean the defaults stated beside each field.
type CellSpec struct {
	Impl     string
	Scenario scenarios.Scenario
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
	HoldDist, ThinkDist scenarios.Dist
	// Keys picks the lock of each acquisition in the keys scenario (and in
	// rate with Locks > 1). Default uniform.
	Keys scenarios.Keys
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
	// Repeat is how many times a fault scenario repeats its script.
	// Default 1.
	Repeat int
	// Config is handed to every client (servers, TTL, retry, seed, …).
	Config impl.Config
	// Progress, if set, is called about once a second while the cell runs,
	// from a goroutine of its own.
	Progress func(Progress)
	// ProgressEvery is the progress interval. Default 1s.
	ProgressEvery time.Duration
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
}

// ErrUsage is wrapped by errors about a spec that cannot run as given.
var ErrUsage = errors.New("lockbench: usage")

func newHist() *hdrhistogram.Histogram { return impl.NewHistogram() }

// RunCell connects the clients, runs the cell and returns its result. Client
// connections are made, with bounded parallelism, before the clock starts.
func RunCell(ctx context.Context, spec CellSpec) (report.Cell, error) {
	res, err := RunCellDetail(ctx, spec)
	return res.Cell, err
}

// Result is a cell's summary with its timeline.
type Result struct {
	report.Cell
	// Start is when measuring began; Intervals are the seconds after it.
	Start     time.Time
	Intervals []Interval
}

// RunCellDetail is RunCell that also returns the cell's per-second
// histograms, from which `run` writes the cell's interval log.
func RunCellDetail(ctx context.Context, spec CellSpec) (Result, error) {
	if err := spec.validate(); err != nil {
		return Result{}, err
	}
	if spec.Scenario.Kind == scenarios.Fault {
		return runFault(ctx, spec)
	}
	d, lockers, err := setUp(ctx, spec)
	if err != nil {
		return Result{}, err
	}
	r := newCellRun(spec, d, lockers)
	defer r.closeAll()
	return r.run(ctx)
}

// setUp connects spec.Clients clients and has the first prepare the
// server for spec.Locks names, all before any clock starts. spec must be
// validated.
func setUp(ctx context.Context, spec CellSpec) (impl.Driver, []impl.Locker, error) {
	d, _ := impl.Lookup(spec.Impl)
	lockers, err := connect(ctx, d, spec)
	if err != nil {
		return d, nil, err
	}
	if p, ok := lockers[0].(impl.Preparer); ok {
		if err := p.Prepare(ctx, lockNames(spec.Locks)); err != nil {
			for _, l := range lockers {
				l.Close()
			}
			return d, nil, fmt.Errorf("%s: prepare: %w", d.Name, err)
		}
	}
	return d, lockers, nil
}

func (s *CellSpec) validate() error {
	if _, ok := impl.Lookup(s.Impl); !ok {
		return fmt.Errorf("%w: unknown implementation %q", ErrUsage, s.Impl)
	}
	if s.Clients < 1 {
		return fmt.Errorf("%w: clients must be ≥ 1, got %d", ErrUsage, s.Clients)
	}
	if s.Locks == 0 {
		s.Locks = 1
	}
	if s.Locks < 0 {
		return fmt.Errorf("%w: locks must be ≥ 1, got %d", ErrUsage, s.Locks)
	}
	if s.Scenario.Name == "" {
		s.Scenario, _ = scenarios.Lookup("hot")
	}
	if s.Scenario.Kind == scenarios.ClosedLoop || s.Scenario.Kind == scenarios.OpenLoop {
		if (s.Duration > 0) == (s.Acquires > 0) {
			return fmt.Errorf("%w: give exactly one of duration and acquires", ErrUsage)
		}
	}
	if s.Scenario.Kind == scenarios.OpenLoop {
		if s.Rate <= 0 {
			return fmt.Errorf("%w: scenario %s needs a rate > 0 (--rate)", ErrUsage, s.Scenario.Name)
		}
		if s.MaxInflight <= 0 {
			s.MaxInflight = s.Clients
		}
	}
	switch s.Arrival {
	case "":
		s.Arrival = ArrivalConstant
	case ArrivalConstant, ArrivalPoisson:
	default:
		return fmt.Errorf("%w: arrival must be %s or %s, got %q", ErrUsage, ArrivalConstant, ArrivalPoisson, s.Arrival)
	}
	if s.HoldDist.IsZero() {
		s.HoldDist = scenarios.Fixed(s.Hold)
	}
	if s.ThinkDist.IsZero() {
		s.ThinkDist = scenarios.Fixed(s.Think)
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
	return nil
}

// connect makes one client per simulated client, at most ConnectParallel at
// a time, and returns when every one is ready. On any failure it closes
// those made and returns the first error.
func connect(ctx context.Context, d impl.Driver, spec CellSpec) ([]impl.Locker, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lockers := make([]impl.Locker, spec.Clients)
	sem := make(chan struct{}, spec.ConnectParallel)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for i := range spec.Clients {
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
			cfg.Client = i
			l, err := d.New(ctx, cfg)
			if err != nil {
				once.Do(func() { firstErr = fmt.Errorf("%s client %d: %w", d.Name, i, err); cancel() })
				return
			}
			lockers[i] = l
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

// cellRun is one cell in flight.
type cellRun struct {
	spec    CellSpec
	driver  impl.Driver
	workers []*worker
	names   []string
	check   *checker

	start, measureFrom, deadline time.Time
	limited                      bool
	remaining                    atomic.Int64

	// keepOpen leaves the clients connected after the cell (a ramp's
	// stairs share them).
	keepOpen bool

	// burst
	grants      atomic.Int64
	settleState atomic.Int32 // 0 exact, 1 timeout, 2 none

	// open loop
	arrivals   chan int64 // intended arrival, ns after start
	inflight   atomic.Int64
	offered    atomic.Int64
	dropped    atomic.Int64
	unfinished atomic.Int64
	lag        *hdrhistogram.Histogram // the generator's own: how late it fired
}

func newCellRun(spec CellSpec, d impl.Driver, lockers []impl.Locker) *cellRun {
	r := &cellRun{spec: spec, driver: d}
	r.names = lockNames(spec.Locks)
	r.workers = make([]*worker, len(lockers))
	for i, l := range lockers {
		w := newWorker(i, l, spec.Config.Seed)
		if spec.Scenario.Keys || spec.Scenario.Kind == scenarios.OpenLoop {
			w.picker = spec.Keys.NewPicker(spec.Locks, w.rng)
		}
		r.workers[i] = w
	}
	if spec.Scenario.Kind == scenarios.OpenLoop {
		r.arrivals = make(chan int64, spec.MaxInflight)
		r.lag = newHist()
	}
	return r
}

func lockNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("lock-%d", i)
	}
	return names
}

func (r *cellRun) closeAll() {
	if r.keepOpen {
		return
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for _, w := range r.workers {
		if w.l == nil {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			w.l.Close()
		})
	}
	wg.Wait()
	for _, w := range r.workers {
		w.l = nil
	}
}

func (r *cellRun) run(ctx context.Context) (Result, error) {
	spec := r.spec
	var serverBefore map[string]int64
	var serverErr error
	if r.driver.ServerStats != nil {
		serverBefore, serverErr = r.driver.ServerStats(ctx, spec.Config.Servers)
	}

	if spec.Scenario.Kind == scenarios.Burst {
		spec.Warmup = 0 // one acquisition each: nothing to warm up
		r.spec.Warmup = 0
	}
	r.start = time.Now()
	r.measureFrom = r.start.Add(spec.Warmup)
	r.check = newChecker(r.start, r.names)
	iv := newIntervals(r.measureFrom, len(r.workers))
	for _, w := range r.workers {
		w.iv = iv
	}
	var cctx context.Context
	var cancel context.CancelFunc
	switch {
	case spec.Scenario.Kind != scenarios.Burst && spec.Duration > 0:
		r.deadline = r.measureFrom.Add(spec.Duration)
		cctx, cancel = context.WithDeadline(ctx, r.deadline)
	default:
		r.limited = spec.Acquires > 0
		r.remaining.Store(spec.Acquires)
		cctx, cancel = context.WithTimeout(ctx, spec.Warmup+spec.MaxTime)
	}
	defer cancel()

	first := make([]int64, len(r.workers))
	for i, w := range r.workers {
		first[i] = w.l.Counters().Notifications.Load()
		if d, ok := w.l.(impl.Distributions); ok {
			d.ResetDistributions() // a ramp's previous stair, say
		}
	}
	base := make([]impl.Counts, len(r.workers))
	snapBase := func() {
		for i, w := range r.workers {
			base[i] = w.l.Counters().Snapshot()
		}
	}
	var warmDone chan struct{}
	if spec.Warmup > 0 && spec.Scenario.Kind != scenarios.Burst {
		warmDone = make(chan struct{})
		go func() {
			defer close(warmDone)
			select {
			case <-time.After(spec.Warmup):
				snapBase()
			case <-cctx.Done():
			}
		}()
	} else {
		snapBase()
	}

	// The open loop's clients outlive the arrivals: every arrival let in
	// before the end is served, however late, or its tail would go missing
	// exactly where a stalled lock shows (coordinated omission again).
	wctx, wcancel := cctx, context.CancelFunc(func() {})
	if spec.Scenario.Kind == scenarios.OpenLoop {
		wctx, wcancel = context.WithTimeout(ctx, spec.Warmup+spec.Duration+spec.MaxTime)
	}
	defer wcancel()
	stopProgress := r.startProgress(cctx)
	health := startHealth()
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for _, w := range r.workers {
		wg.Go(func() {
			<-gate
			switch spec.Scenario.Kind {
			case scenarios.Burst:
				r.burst(cctx, w)
			case scenarios.OpenLoop:
				r.openLoop(wctx, w)
			default:
				r.closedLoop(cctx, w)
			}
		})
	}
	if spec.OnClock != nil {
		spec.OnClock(true)
	}
	close(gate)
	if spec.Scenario.Kind == scenarios.OpenLoop {
		r.generate(cctx)
		for r.inflight.Load() > 0 && wctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		r.unfinished.Store(r.inflight.Load())
		wcancel()
	}
	wg.Wait()
	// A cell that ran into MaxTime before its duration, its acquisitions
	// or its burst was done was cut short: say so.
	truncated := ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && r.deadline.IsZero() ||
		spec.Scenario.Kind == scenarios.OpenLoop && wctx.Err() != nil && ctx.Err() == nil
	end := time.Now()
	gen := health.stop()
	if spec.OnClock != nil {
		spec.OnClock(false)
	}
	stopProgress()
	if warmDone != nil {
		<-warmDone
	}
	interrupted := ctx.Err() != nil

	// Close every session before the final counts, so that notifications
	// still in flight are delivered and counted on both sides.
	counts := make([]*impl.Counters, len(r.workers))
	for i, w := range r.workers {
		counts[i] = w.l.Counters()
	}
	dists, vecs := distributions(r.workers)
	ivs, totals := iv.finish()
	r.closeAll()
	var serverAfter map[string]int64
	if r.driver.ServerStats != nil && serverErr == nil {
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		serverAfter, serverErr = r.driver.ServerStats(sctx, spec.Config.Servers)
		scancel()
	}

	if r.driver.Cleanup != nil && !r.keepOpen {
		cctx2, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		r.driver.Cleanup(cctx2, spec.Config.Servers, spec.Config.Namespace)
		ccancel()
	}
	cell := r.collect(end, counts, base, totals)
	if truncated {
		cell.Truncated = fmt.Sprintf("cut short by the cell time limit (%v)", spec.MaxTime)
	}
	cell.Distributions, cell.Vectors = dists, vecs
	cell.Generator = gen.report(r, cell)
	if r.driver.ServerStats != nil {
		if serverErr != nil {
			cell.ServerNote = serverErr.Error()
		} else {
			// The servers' deltas span the whole cell, warm-up included,
			// from before the first client acted to after the last session
			// closed; client_notifications is the clients' count over the
			// same span, so the two compare like with like.
			cell.Server = map[string]int64{}
			for k, v := range serverAfter {
				cell.Server[k] = v - serverBefore[k]
			}
			var all int64
			for i, c := range counts {
				all += c.Notifications.Load() - first[i]
			}
			cell.Server["client_notifications"] = all
		}
	}
	res := Result{Cell: cell, Start: r.measureFrom, Intervals: ivs}
	if interrupted {
		return res, fmt.Errorf("cell %s: %w", cell.Key(), ctx.Err())
	}
	return res, nil
}

func (r *cellRun) collect(end time.Time, counters []*impl.Counters, base []impl.Counts, totals [nTags]*hdrhistogram.Histogram) report.Cell {
	spec := r.spec
	acq, rel := totals[tagAcquire], totals[tagRelease]
	var c impl.Counts
	errs := map[string]int64{}
	var acquires, nerr int64
	perClient := make([]int64, len(r.workers))
	for i, w := range r.workers {
		perClient[i] = w.acquires.Load()
		acquires += perClient[i]
		nerr += w.errors.Load()
		for k, v := range w.errClass {
			errs[k] += v
		}
		c = c.Add(counters[i].Snapshot().Sub(base[i]))
	}
	measured := end.Sub(r.measureFrom)
	if !r.deadline.IsZero() && end.After(r.deadline) {
		measured = r.deadline.Sub(r.measureFrom)
	}
	if measured < 0 {
		measured = 0
	}
	cell := report.Cell{
		Impl: spec.Impl, Scenario: spec.Scenario.Name, Clients: spec.Clients, Locks: spec.Locks,
		DurationS: measured.Seconds(), Acquires: acquires, Errors: nerr, ErrorsByClass: errs,
		AcquireLatencyUs: latency(acq), ReleaseLatencyUs: latency(rel),
		Counts:   c,
		Fairness: fairness(perClient, acq),
	}
	if h := totals[tagHandoff]; h.TotalCount() > 0 {
		l := latency(h)
		cell.HandoffGapUs = &l
	}
	if spec.Scenario.Kind == scenarios.OpenLoop {
		svc, lag := latency(totals[tagService]), latency(r.lag)
		cell.Open = &report.OpenLoop{
			Rate: spec.Rate, Arrival: spec.Arrival, MaxInflight: spec.MaxInflight,
			Offered: r.offered.Load(), Dropped: r.dropped.Load(), Unfinished: r.unfinished.Load(),
			ServiceLatencyUs: svc, ScheduleLagUs: lag,
		}
	}
	if measured > 0 {
		cell.AcquiresPerS = float64(acquires) / measured.Seconds()
	}
	if acquires > 0 {
		cell.RetriesPerAcquire = float64(c.Retries) / float64(acquires)
		cell.NotificationsPerAcquire = float64(c.Notifications) / float64(acquires)
		cell.RoundTripsPerAcquire = float64(c.RoundTrips) / float64(acquires)
	}
	if spec.Scenario.Kind == scenarios.Burst && spec.Locks == 1 {
		if t, ok := impl.TheoryWakeups(r.driver.Herd, spec.Clients); ok {
			cell.TheoryWakeups = &t
		}
		cell.Settle = [...]string{"exact", "timeout", "none"}[r.settleState.Load()]
	}
	cell.SafetyViolations, cell.Violations = r.check.violations()
	return cell
}

// fairness summarises how acquisitions were shared among clients.
func fairness(per []int64, acq *hdrhistogram.Histogram) *report.Fairness {
	if len(per) == 0 {
		return nil
	}
	f := &report.Fairness{PerClient: per, MaxWaitUs: float64(acq.Max())}
	var sum, sq float64
	lo, hi := per[0], per[0]
	for _, n := range per {
		x := float64(n)
		sum += x
		sq += x * x
		lo, hi = min(lo, n), max(hi, n)
		if n == 0 {
			f.Starved++
		}
	}
	if sum > 0 {
		// Jain's index: 1 when all got the same, 1/n when one got all.
		f.Jain = sum * sum / (float64(len(per)) * sq)
		f.MaxShare = float64(hi) / sum
		f.MinShare = float64(lo) / sum
	}
	return f
}

func latency(h *hdrhistogram.Histogram) report.Latency {
	if h.TotalCount() == 0 {
		return report.Latency{}
	}
	return report.Latency{
		P50: float64(h.ValueAtQuantile(50)), P90: float64(h.ValueAtQuantile(90)),
		P99: float64(h.ValueAtQuantile(99)), P999: float64(h.ValueAtQuantile(99.9)),
		Max: float64(h.Max()), Mean: h.Mean(),
	}
}

// distributions merges the implementations' own distributions over clients.
func distributions(ws []*worker) (map[string]report.Spread, map[string][]int64) {
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
	spreads := map[string]report.Spread{}
	for k, h := range hists {
		unit := 1.0 // µs
		switch {
		case strings.HasSuffix(k, "_ms"):
			unit = 1e3
		case strings.HasSuffix(k, "_s"):
			unit = 1e6
		}
		spreads[k] = report.Spread{
			Count: h.TotalCount(), Min: float64(h.Min()) / unit, P1: float64(h.ValueAtQuantile(1)) / unit,
			P50: float64(h.ValueAtQuantile(50)) / unit, P99: float64(h.ValueAtQuantile(99)) / unit,
			Max: float64(h.Max()) / unit,
		}
	}
	return spreads, vecs
}
