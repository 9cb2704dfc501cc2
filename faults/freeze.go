package faults

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/result"
)

func init() {
	register(fault{name: "freeze", applies: freezable, run: runFreeze,
		options:     []impl.Option{FreezeForOption},
		description: "one of the lock's servers stopped (SIGSTOP) for --freeze-for while clients loop on one lock, then resumed: the longest time without a grant, and how soon grants came back"})
}

// OptFreezeFor is how long the freeze scenario keeps a server stopped.
const OptFreezeFor = "freeze-for"

// DefaultFreezeFor is the freeze when OptFreezeFor is unset: a long GC
// pause or a stopped VM, well inside the default TTL and session timeout.
const DefaultFreezeFor = 2 * time.Second

// FreezeForOption declares OptFreezeFor.
var FreezeForOption = impl.DurationOption(OptFreezeFor, DefaultFreezeFor, time.Millisecond, "freeze: how long a server stays stopped (SIGSTOP … SIGCONT)")

// freezeLead is how long the clients loop before the freeze, so that the
// freeze lands on a lock in use.
const freezeLead = 500 * time.Millisecond

// freezable: the lock's servers are of a kind lockbench starts, hence
// processes it can stop. Whether the run's servers are lockbench's own is
// known only when the cell runs.
func freezable(s subject) error {
	if len(s.Needs) == 0 || s.kind.Name == "" {
		return fmt.Errorf("%s has no servers lockbench starts, so none can be frozen", s.Name)
	}
	return nil
}

// runFreeze: a server stops answering without going away. Clients
// (spec.Clients, at least two) loop on one lock — acquire, hold spec.Hold,
// release — for freezeLead; then the first of the lock's servers is
// stopped with SIGSTOP (it keeps its sockets and its state, and answers
// nothing, as in a long GC pause or a stopped VM) and resumed with SIGCONT
// --freeze-for later; the clients go on for as long again and one second
// more. What is measured: the acquisitions before, during and after the
// freeze, the longest time without a grant, the time from the resume to
// the next grant, errors, sessions lost, and overlaps of two holders.
//
// It freezes the run's own servers, so they must be ones this lockbench
// started; servers it was only given are not frozen, and the cell is
// skipped with a note.
func runFreeze(ctx context.Context, spec engine.CellSpec, s subject) (result.Cell, error) {
	cfg := spec.Config
	freeze, err := optDuration(cfg, OptFreezeFor, DefaultFreezeFor)
	if err != nil {
		return result.Cell{}, err
	}
	if err := needServers(spec, s); err != nil {
		return result.Cell{}, err
	}
	addrs := s.targets(cfg.Servers)
	srv, ok := sandbox.Started(addrs[0])
	if !ok {
		return result.Cell{}, fmt.Errorf("%w: scenario freeze: %s's server %s was not started by this lockbench, so it cannot be frozen",
			engine.ErrNotApplicable, s.Name, addrs[0])
	}
	spec.Clients = max(spec.Clients, 2)
	t := newTally(spec)
	fig := &result.FreezeFigures{Servers: len(addrs), FrozenServers: 1, FreezeForMs: ms(freeze)}
	t.faults.Freeze = fig
	for r := range spec.Repeat {
		if err := freezeOnce(ctx, spec, s, srv, freeze, r, fig, t); err != nil {
			return t.cell(freeze, ""), err
		}
	}
	return t.cell(freeze, ""), nil
}

func freezeOnce(ctx context.Context, spec engine.CellSpec, s subject, srv *sandbox.Server, freeze time.Duration, r int, fig *result.FreezeFigures, t *tally) error {
	cfg := spec.Config
	name := lockName("freeze", r)
	ls := make([]impl.Locker, spec.Clients)
	defer func() { closeAll(t, ls...) }()
	for i := range ls {
		var err error
		if ls[i], err = dial(ctx, s.Driver, cfg, cfg.Servers, i); err != nil {
			return err
		}
	}
	if err := prepare(ctx, ls[0], name); err != nil {
		return err
	}
	lost := func() (n int64) {
		for _, l := range ls {
			n += l.Counters().SessionLost.Load()
		}
		return n
	}
	lostBefore := lost()
	h := &holds{lock: name}
	g := &grants{}
	lctx, cancel := context.WithTimeout(ctx, freezeLead+2*freeze+time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i, l := range ls {
		wg.Go(func() { loopOn(lctx, ctx, t, h, g, l, i, name, spec.Hold, cfg.Retry) })
	}
	sleep(lctx, freezeLead)
	from, to, err := freezeFor(lctx, srv, freeze)
	wg.Wait()
	if err != nil {
		return err
	}
	t.violate(h.overlaps(t, time.Now())...)
	n := lost() - lostBefore
	t.update(func() { fig.SessionLost += n })
	g.tally(t, fig, from, to)
	return nil
}

// freezeFor stops srv for d (or until ctx ends) and resumes it, whatever
// happens, before returning when it was stopped and resumed.
func freezeFor(ctx context.Context, srv *sandbox.Server, d time.Duration) (from, to time.Time, err error) {
	// The freeze starts once every process has been sent its stop: finding
	// them reads all of /proc, which on a loaded machine took long enough
	// for PostgreSQL to grant a hundred times before the first signal, and
	// those grants are not the frozen server's.
	if err := srv.Freeze(); err != nil {
		now := time.Now()
		return now, now, err
	}
	from = time.Now()
	sleep(ctx, d)
	to = time.Now()
	if err := srv.Thaw(); err != nil {
		return from, to, err
	}
	return from, to, nil
}

// loopOn is one client's closed loop until lctx ends: acquire, hold, and
// release, asking again after an error.
func loopOn(lctx, ctx context.Context, t *tally, h *holds, g *grants, l impl.Locker, client int, name string, hold, retry time.Duration) {
	for lctx.Err() == nil {
		start := time.Now()
		lease, err := l.Acquire(lctx, name)
		t.acquiredOp(l, name, start, lease, err)
		if err != nil {
			if lctx.Err() == nil {
				t.failed(err)
				sleep(lctx, retry)
			}
			continue
		}
		got := time.Now()
		t.acquired(got.Sub(start))
		g.add(got)
		k := h.enter(client, got)
		sleep(lctx, hold)
		h.exit(k, time.Now())
		release(ctx, t, lease)
	}
}

// grants are the times a repeat's clients were granted the lock.
type grants struct {
	mu sync.Mutex
	at []time.Time
}

func (g *grants) add(at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.at = append(g.at, at)
}

// tally adds the repeat's figures around a freeze from..to: acquisitions
// before, during and after it, the longest time without a grant that
// overlaps it, and the time from the resume to the next grant.
func (g *grants) tally(t *tally, fig *result.FreezeFigures, from, to time.Time) {
	g.mu.Lock()
	at := slices.Clone(g.at)
	g.mu.Unlock()
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	var before, during, after int
	var stall time.Duration
	prev := from // a freeze with no grant before it stalls from its start
	for _, a := range at {
		switch {
		case a.Before(from):
			before++
			prev = a
			continue
		case a.Before(to):
			during++
		default:
			if after == 0 {
				t.recovered(a.Sub(to))
			}
			after++
		}
		if after <= 1 {
			stall = max(stall, a.Sub(prev))
		}
		prev = a
	}
	if after == 0 {
		stall = max(stall, time.Since(prev))
	}
	t.update(func() {
		if after == 0 {
			fig.Unrecovered++
		}
		fig.AcquiresBefore += int64(before)
		fig.AcquiresFrozen += int64(during)
		fig.AcquiresAfter += int64(after)
		fig.StallMsMax = max(fig.StallMsMax, ms(stall))
		fig.FrozenMsMax = max(fig.FrozenMsMax, ms(to.Sub(from)))
	})
}
