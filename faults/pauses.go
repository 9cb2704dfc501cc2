package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/lockbench/lockbench/dist"
	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/result"
)

func init() {
	register(fault{name: "pauses", applies: both(freezable, expiring), run: runPauses,
		options: []impl.Option{FreezeForOption, PausesForOption, PauseEveryOption},
		description: "Jepsen's etcd lock test in miniature: clients loop on one lock for --pauses-for, each holder reading a register kept in " +
			"lockbench's memory when granted and writing it back plus one before it releases, while every --pause-every one of the lock's " +
			"servers, drawn at random, is stopped (SIGSTOP) for --freeze-for: the share of acknowledged updates lost, unfenced and fenced " +
			"with the lock's token (Jepsen: 5 clients, --hold uniform:0s-2s, a 2 s lease, servers paused over minutes)"})
}

// Options of the pauses scenario: how long it runs, and how often a
// server is stopped (each stop lasts --freeze-for).
const (
	OptPausesFor  = "pauses-for"
	OptPauseEvery = "pause-every"
)

// The pauses scenario's defaults: a minute, as the shortest of Jepsen's
// runs, with a server stopped for --freeze-for every 5 s.
const (
	DefaultPausesFor  = time.Minute
	DefaultPauseEvery = 5 * time.Second
)

// PausesForOption and PauseEveryOption declare the pauses scenario's
// options.
var (
	PausesForOption  = impl.DurationOption(OptPausesFor, DefaultPausesFor, time.Second, "pauses: how long clients loop while servers are stopped on a schedule")
	PauseEveryOption = impl.DurationOption(OptPauseEvery, DefaultPauseEvery, time.Millisecond, "pauses: how often one of the lock's servers, drawn at random, is stopped for --freeze-for")
)

// runPauses: Jepsen's lock-set workload against a lock whose servers
// pause. Clients (spec.Clients, at least two) loop on one lock for
// --pauses-for; each holder reads the register when granted, holds for a
// draw of --hold, writes the register back plus one and releases. The
// register lives in lockbench's memory (as Jepsen's set lived in the
// test's), so the pauses hit the lock alone. Every --pause-every one of
// the lock's servers, drawn at random, is stopped for --freeze-for. What
// is measured: the updates lost per repeat, unfenced and fenced, over the
// acknowledged writes; overlaps of two holders; sessions lost.
func runPauses(ctx context.Context, spec engine.CellSpec, s subject) (result.Cell, error) {
	cfg := spec.Config
	var d [3]time.Duration
	for i, o := range []struct {
		key string
		def time.Duration
	}{{OptFreezeFor, DefaultFreezeFor}, {OptPausesFor, DefaultPausesFor}, {OptPauseEvery, DefaultPauseEvery}} {
		var err error
		if d[i], err = optDuration(cfg, o.key, o.def); err != nil {
			return result.Cell{}, err
		}
	}
	freeze, total, every := d[0], d[1], d[2]
	if every <= freeze {
		return result.Cell{}, fmt.Errorf("%w: scenario pauses: --pause-every %v must be longer than --freeze-for %v", engine.ErrUsage, every, freeze)
	}
	if err := needServers(spec, s); err != nil {
		return result.Cell{}, err
	}
	var srvs []*sandbox.Server
	for _, a := range s.targets(cfg.Servers) {
		srv, ok := sandbox.Started(a)
		if !ok {
			return result.Cell{}, fmt.Errorf("%w: scenario pauses: %s's server %s was not started by this lockbench, so it cannot be stopped",
				engine.ErrNotApplicable, s.Name, a)
		}
		srvs = append(srvs, srv)
	}
	spec.Clients = max(spec.Clients, 2)
	spec.Guard, spec.GuardFunc = true, impl.MemoryRegister()
	if spec.HoldDist.IsZero() {
		spec.HoldDist = dist.Fixed(spec.Hold)
	}
	t := newTally(spec)
	fig := &result.PausesFigures{Servers: len(srvs), FreezeForMs: ms(freeze), EveryMs: ms(every), ForS: total.Seconds()}
	t.faults.Pauses = fig
	sched := schedule{srvs: srvs, freeze: freeze, every: every, total: total}
	// The bound a stale holder's lease is held to: its TTL or session.
	bound, kind := s.bound(cfg), s.leaseBound()
	for r := range spec.Repeat {
		if err := pausesOnce(ctx, spec, s, sched, r, fig, t); err != nil {
			return t.cell(bound, kind), err
		}
	}
	return t.cell(bound, kind), nil
}

// schedule is when and which servers the pauses scenario stops.
type schedule struct {
	srvs                 []*sandbox.Server
	freeze, every, total time.Duration
}

func pausesOnce(ctx context.Context, spec engine.CellSpec, s subject, sched schedule, r int, fig *result.PausesFigures, t *tally) error {
	cfg := spec.Config
	name := lockName("pauses", r)
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
	lostBefore := sessionsLost(ls)
	var before result.GuardCounts
	t.update(func() { before = t.g.fig })
	h := &holds{lock: name}
	lctx, cancel := context.WithTimeout(ctx, sched.total)
	defer cancel()
	var wg sync.WaitGroup
	for i, l := range ls {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(r)<<16|uint64(i)))
		wg.Go(func() { guardedLoop(lctx, ctx, t, h, l, i, name, spec.HoldDist, rng, cfg.Retry) })
	}
	pauses, err := sched.run(lctx, rand.New(rand.NewPCG(cfg.Seed, uint64(r)<<16|0xffff)))
	cancel()
	wg.Wait()
	if err != nil {
		return err
	}
	t.violate(h.overlaps(t, time.Now())...)
	n := sessionsLost(ls) - lostBefore
	t.update(func() {
		fig.Pauses += pauses
		fig.SessionLost += n
		g := t.g.fig
		if w := g.GuardedWrites - before.GuardedWrites; w > 0 {
			fig.LostShareUnfenced = append(fig.LostShareUnfenced, float64(g.LostUpdates-before.LostUpdates)/float64(w))
			fig.LostShareFenced = append(fig.LostShareFenced, float64(g.LostUpdatesFenced-before.LostUpdatesFenced)/float64(w))
		}
	})
	return nil
}

// run stops a server drawn at random for freeze every every, until ctx
// ends, and says how many it stopped; a stop that would not end before
// ctx does is not begun.
func (sc schedule) run(ctx context.Context, rng *rand.Rand) (int64, error) {
	var n int64
	for sleep(ctx, sc.every-sc.freeze) == nil {
		if end, ok := ctx.Deadline(); ok && time.Until(end) < sc.freeze {
			break
		}
		if _, _, err := freezeFor(ctx, sc.srvs[rng.IntN(len(sc.srvs))], sc.freeze); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// guardedLoop is one client's closed loop until lctx ends: acquire, read
// the register, hold a draw of hold, write it back plus one and release,
// asking again after an error.
func guardedLoop(lctx, ctx context.Context, t *tally, h *holds, l impl.Locker, client int, name string, hold dist.Dist, rng *rand.Rand, retry time.Duration) {
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
		t.granted(ctx, l, name, lease)
		k := h.enter(client, got)
		sleep(ctx, hold.Sample(rng))
		h.exit(k, time.Now())
		release(ctx, t, lease)
	}
}

// sessionsLost sums the clients' lost sessions.
func sessionsLost(ls []impl.Locker) (n int64) {
	for _, l := range ls {
		n += l.Counters().SessionLost.Load()
	}
	return n
}
