package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/exclusion"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// runLoad connects a load scenario's clients, runs the cell and closes
// them again.
func runLoad(ctx context.Context, spec CellSpec, sh Shape) (Result, error) {
	d, lockers, err := setUp(ctx, spec)
	if err != nil {
		return Result{}, err
	}
	r := newCellRun(spec, d, lockers, sh)
	defer r.closeAll()
	if err := r.openGuards(ctx); err != nil {
		return Result{}, err
	}
	return r.run(ctx)
}

// ReleaseGrace is how long a release may run on after its cell ended.
const ReleaseGrace = 2 * time.Second

// Cell is one load cell in flight: what every scenario's shape shares —
// the spec, the driver, the clients and their lock names, the checker, the
// clock — while the shape holds its own state.
type Cell struct {
	// Spec is the cell's checked spec; a shape's Prepare may adjust it.
	Spec CellSpec
	// Driver is the resolved driver of Spec.Impl.
	Driver impl.Driver
	// Clients are the cell's clients of this process, each on its own
	// connection.
	Clients []*Client
	// BeforeRelease, if set by a shape's Prepare, runs before every
	// release (the burst waits for its waiters there).
	BeforeRelease func(ctx context.Context)
	// AfterClients, if set by a shape's Prepare, runs once every client
	// has stopped and before their sessions close (the abandon scenario
	// counts leftovers there).
	AfterClients func(ctx context.Context)

	shape Shape
	names lockNames
	check *exclusion.Checker

	start, measureFrom, deadline time.Time
	limited                      bool
	remaining                    atomic.Int64

	// keepOpen leaves the clients connected after the cell (a ramp's
	// stairs share them).
	keepOpen bool
	// wctx is the context clients serve under; it outlives the cell's
	// deadline where a shape drains (the open loop).
	wctx    context.Context
	wcancel context.CancelFunc
	// relCtx is what releases run under (see launch).
	relCtx context.Context
	// stop ends the cell early; panicked holds the first client panic.
	stop     context.CancelFunc
	panicked atomic.Pointer[string]
	// truncated says why the cell stopped before it was done, if it did.
	truncated string
	// live is when the lock last changed hands; livelock is set when the
	// cell ended for want of it (see watchLivelock).
	live progress
	// procsTries and procsWhy are what the warm-up's trial of
	// GOMAXPROCS found (ProcsTrial).
	procsTries     []result.ProcsTry
	procsWhy       string
	procsUndecided bool
	livelock       *result.Livelock

	// sharded: the grants' stream and the end of answering other shards'
	// settle calls.
	grantLog  *grantLog
	stopServe context.CancelFunc

	// guarded says the clients hold guarded registers (Spec.Guard);
	// guardNote says why not, when the spec asked for them.
	guarded   bool
	guardNote string
}

func newCellRun(spec CellSpec, d impl.Driver, lockers []impl.Locker, sh Shape) *Cell {
	r := &Cell{Spec: spec, Driver: d, shape: sh}
	r.names = newLockNames(spec.Locks)
	r.Clients = make([]*Client, len(lockers))
	lo, _ := spec.Shard.Range(spec.Clients)
	for i, l := range lockers {
		r.Clients[i] = newWorker(lo+i, l, spec.Config.Seed)
		r.Clients[i].timeout = spec.AcquireTimeout
	}
	sh.Prepare(r)
	r.startHistory()
	return r
}

func (r *Cell) closeAll() {
	if r.keepOpen {
		return
	}
	r.closeGuards()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for _, w := range r.Clients {
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
	for _, w := range r.Clients {
		w.l = nil
	}
}

// sink is where the cell's intervals go as they close: the spec's
// OnInterval, told which cell they belong to, or nowhere but the result.
func (r *Cell) sink() func(hlog.Interval) {
	if r.Spec.OnInterval == nil {
		return nil
	}
	c := result.Cell{Impl: r.Spec.Impl, Scenario: r.Spec.Scenario.Name(), Clients: r.Spec.Clients}
	return func(iv hlog.Interval) { r.Spec.OnInterval(c, r.measureFrom, iv) }
}

// clientCounts is what the clients counted, at the start of a cell (for
// deltas) and at its end.
type clientCounts struct {
	notifications []int64       // Counters.Notifications at the cell's start
	base          []impl.Counts // every counter when measuring began
}

func (r *Cell) run(ctx context.Context) (Result, error) {
	// The machine's sleeper starts with a process's first cell, before
	// its clock: tens of milliseconds to start a process.
	readyWakeProbe()
	// A shard reads the servers' counters once every shard is connected,
	// so that no shard's connecting lands in another's span.
	at, err := r.lineUp(ctx)
	if err != nil {
		return Result{}, err
	}
	defer r.release()
	// The garbage of connecting, and of the cell before, is collected
	// before the clock starts, as testing.B does before each run: a 20 ms
	// burst otherwise paid for it here (GC paused lockbench 3-4 % of
	// four bursts of eight clients in one quick tier).
	runtime.GC()
	// A burst's cost per hand-off, and a wait's per waiter, are read above
	// the servers' idle rate.
	srv := startServerCounters(ctx, r.Spec.ServerKinds, r.Driver, r.Spec.Config.Servers, readsIdle(r.Spec.Scenario))
	if err := sleepUntil(ctx, at); err != nil {
		return Result{}, err
	}
	r.start = time.Now()
	for _, w := range r.Clients {
		w.t0 = r.start
	}
	r.measureFrom = r.start.Add(r.Spec.Warmup)
	r.check = exclusion.NewChecker(r.start, r.names.len(), r.names.at)
	iv := newIntervals(r.measureFrom, r.Clients, r.sink())
	var cctx context.Context
	var cancel context.CancelFunc
	if r.Spec.Duration > 0 {
		// The cell time limit bounds a timed cell too: a duration beyond
		// it is cut there, and the cell says so.
		r.deadline = r.measureFrom.Add(min(r.Spec.Duration, r.Spec.MaxTime))
		if r.Spec.Duration > r.Spec.MaxTime {
			r.truncated = r.cutShort()
		}
		cctx, cancel = context.WithDeadline(ctx, r.deadline)
	} else {
		r.limited = r.Spec.Acquires > 0
		r.remaining.Store(r.Spec.Shard.share(r.Spec.Acquires, r.Spec.Clients))
		cctx, cancel = context.WithTimeout(ctx, r.Spec.Warmup+r.Spec.MaxTime)
	}
	defer cancel()
	r.stop = cancel
	health := startHealth()
	counts, warmDone := r.baseCounts(cctx, health.measureFrom)

	stopProgress := r.startProgress(cctx)
	trial := r.startProcsTrial(cctx)
	r.launch(ctx, cctx)
	// A cell that ran into MaxTime before its acquisitions or its burst
	// were done was cut short: say so.
	if r.truncated == "" && ctx.Err() == nil && r.deadline.IsZero() && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		r.truncated = r.cutShort()
	}
	end := time.Now()
	gen := health.stop()
	if r.Spec.OnClock != nil {
		r.Spec.OnClock(false)
	}
	stopProgress()
	if warmDone != nil {
		<-warmDone
	}
	r.procsTries, r.procsWhy, r.procsUndecided = trial()
	return r.finish(ctx, end, iv, counts, srv, gen)
}

// baseCounts notes every client's counters before it acts, and again when
// the warm-up ends (at once without one), calling warmed then too;
// warmDone closes when that is done, or is nil when it already is.
func (r *Cell) baseCounts(cctx context.Context, warmed func()) (*clientCounts, chan struct{}) {
	cc := &clientCounts{notifications: make([]int64, len(r.Clients)), base: make([]impl.Counts, len(r.Clients))}
	for i, w := range r.Clients {
		cc.notifications[i] = w.l.Counters().Notifications.Load()
		if d, ok := w.l.(impl.Distributions); ok {
			d.ResetDistributions() // a ramp's previous stair, say
		}
	}
	snap := func() {
		for i, w := range r.Clients {
			cc.base[i] = w.l.Counters().Snapshot()
		}
	}
	if r.Spec.Warmup <= 0 {
		snap()
		return cc, nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-time.After(r.Spec.Warmup):
			snap()
			warmed()
		case <-cctx.Done():
		}
	}()
	return cc, done
}

// launch starts every client at once, runs the shape's own part and waits
// for the clients to stop.
func (r *Cell) launch(ctx, cctx context.Context) {
	r.wctx, r.wcancel = cctx, func() {}
	if s, ok := r.shape.(Serving); ok {
		r.wctx, r.wcancel = s.ServeContext(ctx, r)
	}
	defer r.wcancel()
	// Releases outlive the clients' context — a holder releases what it
	// holds even as the cell ends — but not by more than ReleaseGrace, so
	// that a server that stopped answering cannot hold the cell open.
	var relCancel context.CancelFunc
	r.relCtx, relCancel = context.WithCancel(context.WithoutCancel(ctx))
	defer relCancel()
	stopGrace := context.AfterFunc(r.wctx, func() { time.AfterFunc(ReleaseGrace, relCancel) })
	defer stopGrace()
	stopWatch := r.watchLivelock()
	defer stopWatch()
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for _, w := range r.Clients {
		wg.Go(func() {
			defer r.recoverClient(w)
			defer w.flushGrants()
			<-gate
			r.shape.Client(r.wctx, r, w)
		})
	}
	if r.Spec.OnClock != nil {
		r.Spec.OnClock(true)
	}
	close(gate)
	r.shape.Drive(cctx, r)
	wg.Wait()
	stopWatch()
	if r.AfterClients != nil {
		r.AfterClients(ctx)
	}
}

// cutShort is the reason for a cell the time limit ended.
func (r *Cell) cutShort() string {
	return fmt.Sprintf("cut short by the cell time limit (%v)", r.Spec.MaxTime)
}

// recoverClient turns a client's panic into the end of the cell: the
// others stop, and what was measured is kept and reported with the panic.
func (r *Cell) recoverClient(w *Client) {
	p := recover()
	if p == nil {
		return
	}
	msg := fmt.Sprintf("client %d panicked: %v", w.id, p)
	r.panicked.CompareAndSwap(nil, &msg)
	r.stop()
	r.wcancel()
}

// finish closes the clients, reads the servers' counters and cleans up,
// then puts the cell's result together.
func (r *Cell) finish(ctx context.Context, end time.Time, iv *intervals, cc *clientCounts, srv *serverCounters, gen *health) (Result, error) {
	// The servers' CPU over the cell is read as the clients stop, before
	// closing and cleaning up add their own.
	serverCPU, serverSpan := srv.cpuUsed()
	// Close every session before the final counts, so that notifications
	// still in flight are delivered and counted on both sides.
	counters := make([]*impl.Counters, len(r.Clients))
	for i, w := range r.Clients {
		counters[i] = w.l.Counters()
	}
	dists, vecs := distributions(r.Clients)
	ivs, totals := iv.finish(end)
	r.closeAll()
	doneErr := r.leave(ctx)
	// An interrupted cell reads no counters and cleans nothing up: the
	// user asked to stop, and a server that stopped answering would keep
	// them waiting. (The namespace is the run's own; nothing else sees it.)
	if ctx.Err() == nil {
		srv.stop(ctx)
	} else {
		srv.err = fmt.Errorf("interrupted before the servers' counters were read: %w", ctx.Err())
	}
	if r.Driver.Cleanup != nil && !r.keepOpen && ctx.Err() == nil && (r.Spec.Shard == nil || r.Spec.Shard.Index == 0) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		r.Driver.Cleanup(cctx, r.Spec.Config.Servers, r.Spec.Config.Namespace)
		cancel()
	}
	cell := r.collect(end, counters, cc.base, totals)
	cell.Truncated = r.truncated
	if len(dists) > 0 {
		cell.Distributions = spreadsOf(dists)
	}
	cell.Vectors = vecs
	cell.Generator = gen.report(cell, serverCPU, serverSpan)
	if srv.idle >= 0 {
		idle := srv.idle
		cell.Generator.ServerIdleCores = &idle
	}
	cell.Generator.ProcsTrial, cell.Generator.ProcsWhy, cell.Generator.ProcsUndecided = r.procsTries, r.procsWhy, r.procsUndecided
	if r.procsWhy == "" {
		cell.Generator.ProcsWhy = r.Spec.ProcsWhy
	}
	var all int64
	for i, c := range counters {
		all += c.Notifications.Load() - cc.notifications[i]
	}
	cell.Server, cell.ServerCounts, cell.ServerNote = srv.deltas(all)
	r.shardNotes(&cell, srv)
	res := Result{Cell: cell, Start: r.measureFrom, Intervals: ivs, Distributions: dists}
	if p := r.panicked.Load(); p != nil {
		res.Truncated = *p
		return res, fmt.Errorf("cell %s: %w: %s", cell.Key(), ErrPanic, *p)
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("cell %s: %w", cell.Key(), ctx.Err())
	}
	if doneErr != nil {
		return res, fmt.Errorf("cell %s: %w", cell.Key(), doneErr)
	}
	return res, nil
}

// collect feeds the cell's accumulator with what every client measured
// and lets it derive the cell's figures; the scenario adds its own.
func (r *Cell) collect(end time.Time, counters []*impl.Counters, base []impl.Counts, totals Totals) result.Cell {
	spec := r.Spec
	acc := result.NewAccumulator(result.Cell{
		Impl: spec.Impl, Scenario: spec.Scenario.Name(), Kind: spec.Scenario.Kind(),
		Clients: spec.Clients, Locks: spec.Locks, Theory: r.Driver.Theory,
	})
	for i, w := range r.Clients {
		acc.AddClient(i, w.acquires.Load(), w.errClass, counters[i].Snapshot().Sub(base[i]))
	}
	for tag, name := range tagNames {
		if name != "" {
			acc.AddHistogram(name, totals[tag])
		}
	}
	measured := end.Sub(r.measureFrom)
	if !r.deadline.IsZero() && end.After(r.deadline) {
		measured = r.deadline.Sub(r.measureFrom)
	}
	acc.Measured(max(measured, 0))
	acc.AddAbandon(r.abandonFigures())
	acc.AddRenew(r.renewFigures())
	acc.AddChecked(r.check.Found())
	cell := acc.Cell()
	r.shape.Finish(r, &cell, totals)
	r.livelockFinding(&cell)
	r.judgeSafety(&cell)
	return cell
}

// NumLocks is how many lock names the cell's clients share.
func (r *Cell) NumLocks() int { return r.names.len() }

// LockName is lock i's name, in the cell's namespace.
func (r *Cell) LockName(i int) string { return r.names.at(i) }

// Start is when the cell's clients started, warm-up included.
func (r *Cell) Start() time.Time { return r.start }

// MeasureFrom is when the warm-up ended: what starts before is not
// counted.
func (r *Cell) MeasureFrom() time.Time { return r.measureFrom }

// Deadline is when a timed cell ends; zero for a counted one.
func (r *Cell) Deadline() time.Time { return r.deadline }

// Spend takes one acquisition from a counted cell's budget and reports
// whether there was one: always true for a timed cell.
func (r *Cell) Spend() bool { return !r.limited || r.remaining.Add(-1) >= 0 }

// Serving is the context the clients serve under, which a Serving shape
// may have made outlive the deadline.
func (r *Cell) Serving() context.Context { return r.wctx }

// StopServing ends the context the clients serve under.
func (r *Cell) StopServing() { r.wcancel() }

// Truncate says why the cell stopped before it was done.
func (r *Cell) Truncate(why string) { r.truncated = why }

// NewCell is a cell of spec with no clients whose clock started at start,
// its warm-up and duration counted from there: for driving a shape's own
// bookkeeping by hand, as its tests do.
func NewCell(spec CellSpec, start time.Time) *Cell {
	r := &Cell{Spec: spec, start: start, measureFrom: start.Add(spec.Warmup)}
	if spec.Duration > 0 {
		r.deadline = r.measureFrom.Add(spec.Duration)
	}
	r.limited = spec.Duration == 0 && spec.Acquires > 0
	r.remaining.Store(spec.Acquires)
	return r
}
