package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/result"
)

// Shard is this process's part of a sharded cell: its Index of Count
// shards runs a contiguous slice of the cell's clients under their
// global ids, so seeds, tokens and lock names are those of one process
// running them all. Coord lines the shards up through the servers.
type Shard struct {
	Index, Count int
	Coord        Coordinator
	// Grants, if set, receives every grant of the cell, in batches, from
	// one goroutine of the cell's, so a merge can check mutual exclusion
	// over all shards.
	Grants func(cell result.Cell, gs []result.Grant)
}

// Coordinator lines up the shards of a cell. Every method is called with
// the cell's Meeting, the same on every shard; each is safe for
// concurrent use.
type Coordinator interface {
	// Start returns once every shard has connected its clients for the
	// cell, with the instant, on this process's clock, at which all
	// start.
	Start(ctx context.Context, m Meeting) (time.Time, error)
	// Done returns once every shard has finished the cell and closed its
	// clients.
	Done(ctx context.Context, m Meeting) error
	// Settle returns once every shard's waiters have settled (local runs
	// this shard's own wait), so that a burst's hand-off meets a full,
	// armed queue across processes.
	Settle(ctx context.Context, m Meeting, local func(context.Context)) error
	// Serve answers other shards' Settle calls with local until ctx ends.
	Serve(ctx context.Context, m Meeting, local func(context.Context))
}

// Meeting names a cell to the coordinator: its Key, the same on every
// shard, and the server kinds its driver measures, which a coordinator
// keeps its own traffic off where it can.
type Meeting struct {
	Key   string
	Kinds []string
}

// meeting is this cell's Meeting.
func (r *Cell) meeting() Meeting {
	m := Meeting{Key: r.Spec.Config.Namespace}
	for _, n := range r.Driver.Needs {
		m.Kinds = append(m.Kinds, n.Kind)
	}
	return m
}

// Range is the slice of clients shard s runs of a cell of n: [lo, hi).
// Slices differ in size by at most one.
func (s *Shard) Range(n int) (lo, hi int) {
	if s == nil {
		return 0, n
	}
	return n * s.Index / s.Count, n * (s.Index + 1) / s.Count
}

// check refuses a shard that cannot run spec.
func (s *Shard) check(spec *CellSpec) error {
	if s == nil {
		return nil
	}
	switch {
	case s.Count < 1 || s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("%w: shard %d/%d: want 0 ≤ i < N", ErrUsage, s.Index, s.Count)
	case s.Coord == nil:
		return fmt.Errorf("%w: shard %d/%d without a coordinator", ErrUsage, s.Index, s.Count)
	case spec.Clients < s.Count:
		return fmt.Errorf("%w: %d clients cannot be split over %d shards", ErrUsage, spec.Clients, s.Count)
	}
	if !Shardable(spec.Scenario) {
		return fmt.Errorf("%w: scenario %s cannot run sharded (hot, keys and burst can)", ErrUsage, spec.Scenario.Name())
	}
	if spec.Repeat > 1 && spec.Scenario.Kind() != result.KindFault {
		return fmt.Errorf("%w: --repeat %d cannot run sharded: run the shards again instead", ErrUsage, spec.Repeat)
	}
	return nil
}

// Shardable reports whether s can run split over shards: the closed loops
// and the burst, whose shards need to agree only on when to start and, in
// a burst, when to hand on.
func Shardable(s Scenario) bool {
	ls, ok := s.(loadScenario)
	return ok && ls.s.Shardable
}

// share is this shard's part of n acquisitions, split as the clients are.
func (s *Shard) share(n int64, clients int) int64 {
	if s == nil || n == 0 {
		return n
	}
	lo, hi := s.Range(clients)
	return n*int64(hi)/int64(clients) - n*int64(lo)/int64(clients)
}

// grantBatchLen is how many grants a worker gathers before handing them on.
const grantBatchLen = 256

type grantBatch struct {
	n int
	g [grantBatchLen]result.Grant
}

// grantLog streams a cell's grants to the shard's sink: workers fill
// batches of their own (no lock, no allocation but the pool's) and hand
// them to one goroutine.
type grantLog struct {
	ch     chan *grantBatch
	pool   sync.Pool
	done   chan struct{}
	closed sync.Once
}

func newGrantLog(sink func([]result.Grant), workers int) *grantLog {
	g := &grantLog{ch: make(chan *grantBatch, workers+4), done: make(chan struct{})}
	g.pool.New = func() any { return new(grantBatch) }
	go func() {
		defer close(g.done)
		for b := range g.ch {
			sink(b.g[:b.n])
			b.n = 0
			g.pool.Put(b)
		}
	}()
	return g
}

// add notes one grant of w's.
func (w *Client) addGrant(x result.Grant) {
	if w.grantLog == nil {
		return
	}
	if w.grantBuf == nil {
		w.grantBuf = w.grantLog.pool.Get().(*grantBatch)
	}
	b := w.grantBuf
	b.g[b.n] = x
	b.n++
	if b.n == grantBatchLen {
		w.flushGrants()
	}
}

func (w *Client) flushGrants() {
	if b := w.grantBuf; b != nil {
		w.grantBuf = nil
		w.grantLog.ch <- b
	}
}

// close waits until every batch is handed to the sink; workers have
// stopped. A nil log has nothing to close; closing twice is closing once.
func (g *grantLog) close() {
	if g == nil {
		return
	}
	g.closed.Do(func() { close(g.ch) })
	<-g.done
}

// lineUp, in a sharded cell, waits for every shard to connect and
// returns the common start (zero in a cell of one process); a burst's
// shard answers the others' settle calls from then until all are done.
// The grants' stream opens here too.
func (r *Cell) lineUp(ctx context.Context) (time.Time, error) {
	sh := r.Spec.Shard
	if sh == nil {
		return time.Time{}, nil
	}
	m := r.meeting()
	if sh.Grants != nil {
		c := result.Cell{Impl: r.Spec.Impl, Scenario: r.Spec.Scenario.Name(), Clients: r.Spec.Clients}
		r.grantLog = newGrantLog(func(gs []result.Grant) { sh.Grants(c, gs) }, len(r.Clients))
		for _, w := range r.Clients {
			w.grantLog = r.grantLog
		}
	}
	at, err := sh.Coord.Start(ctx, m)
	if err != nil {
		r.release()
		return at, err
	}
	if q, ok := r.shape.(Queued); ok {
		b := q.HandoffBarrier()
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		r.stopServe = cancel
		go sh.Coord.Serve(sctx, m, func(ctx context.Context) { b.localSettle(ctx, r) })
	}
	return at, nil
}

// sleepUntil waits until at (at once for a zero or past one) or until ctx
// ends.
func sleepUntil(ctx context.Context, at time.Time) error {
	d := time.Until(at)
	if at.IsZero() || d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leave, in a sharded cell, closes the grants' stream and waits for every
// shard to finish the cell before the servers' counters are read and the
// first shard cleans up.
func (r *Cell) leave(ctx context.Context) error {
	sh := r.Spec.Shard
	if sh == nil {
		return nil
	}
	r.grantLog.close()
	var err error
	if ctx.Err() == nil {
		err = sh.Coord.Done(ctx, r.meeting())
	}
	r.release()
	return err
}

// release stops what lineUp started — the grants' stream and the burst's
// answering of settle calls — on whatever path the cell ends by: run
// defers it, so an interrupt during the start lead or a panic before
// finish leaks neither goroutine. It may be called more than once.
func (r *Cell) release() {
	r.grantLog.close()
	if r.stopServe != nil {
		r.stopServe()
	}
}

// shardNotes adds what a merge needs to a shard's cell.
func (r *Cell) shardNotes(c *result.Cell, srv *serverCounters) {
	sh := r.Spec.Shard
	if sh == nil {
		return
	}
	lo, hi := sh.Range(r.Spec.Clients)
	c.Shard = &result.CellShard{Index: sh.Index, Count: sh.Count, First: lo, Clients: hi - lo}
	if srv.before != nil && srv.after != nil {
		c.ServerRaw = &result.ServerReadings{Before: srv.before, After: srv.after}
		if len(srv.counts) > 0 {
			b, a := srv.typed(srv.before), srv.typed(srv.after)
			c.ServerRaw.CountsBefore, c.ServerRaw.CountsAfter = &b, &a
		}
	}
}
