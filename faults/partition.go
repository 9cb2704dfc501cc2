package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// PartitionPhase is how long the clients run a closed loop with a
// minority of Redlock masters cut off.
const PartitionPhase = time.Second

// runPartition: servers cut off from the clients by proxies that drop
// traffic without closing anything.
//
//   - a quorum lock (redlock, redsync): spec.Clients clients loop on one lock with one of
//     five masters cut (a minority: they should keep getting the lock),
//     then each asks once more with three cut (a majority: every attempt
//     should fail promptly with no_quorum, never hang).
//   - a session lease on an ensemble (ZooKeeper's locks): on a three-member ensemble (the run's, or one of the runner's
//     own when the run's is smaller), A holds the lock and its member is
//     cut off. A's session should move to another member before the
//     session timeout, keeping A's node; B must not get the lock until A
//     releases, one and a half session timeouts after the cut. Then A
//     takes the lock again through its new member.
func runPartition(ctx context.Context, spec engine.CellSpec, s subject) (result.Cell, error) {
	t := newTally(spec)
	if s.layout() == ensemble {
		return partitionMember(ctx, spec, s, t)
	}
	if err := needServers(spec, s); err != nil {
		return result.Cell{}, err
	}
	if n := len(s.targets(spec.Config.Servers)); n < 5 {
		return result.Cell{}, fmt.Errorf("%w: partition cuts 1 and then 3 masters: needs 5 or more, got %d", engine.ErrUsage, n)
	}
	fig := &result.PartitionFigures{Masters: len(s.targets(spec.Config.Servers)), PhaseMs: ms(PartitionPhase)}
	t.faults.Partition = fig
	for r := range spec.Repeat {
		if err := partitionMasters(ctx, spec, s, r, fig, t); err != nil {
			return t.cell(0, ""), err
		}
	}
	return t.cell(0, ""), nil
}

func partitionMasters(ctx context.Context, spec engine.CellSpec, s subject, r int, fig *result.PartitionFigures, t *tally) error {
	cfg := spec.Config
	name := lockName("partition", r)
	ps, err := newProxies(s.targets(cfg.Servers), 0, 0, cfg.Seed)
	if err != nil {
		return err
	}
	defer ps.Close()
	ls := make([]impl.Locker, spec.Clients)
	defer func() { closeAll(t, ls...) }()
	for i := range ls {
		if ls[i], err = dial(ctx, s.Driver, cfg, s.on(ps.Addrs()), i); err != nil {
			return err
		}
	}
	h := &holds{lock: name}

	// A minority cut: a closed loop for PartitionPhase.
	ps[0].Cut()
	t.update(func() { fig.MastersCutMinority = 1 })
	pctx, cancel := context.WithTimeout(ctx, PartitionPhase)
	defer cancel()
	var wg sync.WaitGroup
	for i, l := range ls {
		wg.Go(func() {
			for pctx.Err() == nil {
				start := time.Now()
				lease, err := l.Acquire(pctx, name)
				t.acquiredOp(l, name, start, lease, err)
				if err != nil {
					if pctx.Err() == nil {
						t.failed(err)
						t.update(func() { fig.ErrorsMinorityCut++ })
						sleep(pctx, cfg.Retry)
					}
					continue
				}
				got := time.Now()
				t.acquired(got.Sub(start))
				t.update(func() { fig.AcquiresMinorityCut++ })
				k := h.enter(i, got)
				sleep(pctx, spec.Hold)
				h.exit(k, time.Now())
				release(ctx, t, lease)
			}
		})
	}
	wg.Wait()

	// A majority cut: one attempt each, which must fail, and fast.
	ps[1].Cut()
	ps[2].Cut()
	t.update(func() { fig.MastersCutMajority = 3 })
	bound := cfg.TTL + 5*time.Second
	for i, l := range ls {
		wg.Go(func() {
			actx, cancel := context.WithTimeout(ctx, bound)
			defer cancel()
			start := time.Now()
			lease, err := l.Acquire(actx, name)
			t.acquiredOp(l, name, start, lease, err)
			took := time.Since(start)
			t.update(func() { fig.AttemptsMajorityCut++ })
			if err == nil {
				t.acquired(took)
				t.update(func() { fig.AcquiresMajorityCut++ })
				k := h.enter(i, time.Now())
				h.exit(k, time.Now())
				release(ctx, t, lease)
				return
			}
			if ctx.Err() != nil {
				return
			}
			t.failed(err)
			t.update(func() {
				switch {
				case errors.Is(err, impl.ErrNoQuorum):
					fig.NoQuorumMajorityCut++
				case errors.Is(err, context.DeadlineExceeded):
					fig.HungMajorityCut++
				}
				fig.FailMsMaxMajorityCut = max(fig.FailMsMaxMajorityCut, ms(took))
			})
		})
	}
	wg.Wait()
	t.violate(h.overlaps(t, time.Now())...)
	return ctx.Err()
}

func partitionMember(ctx context.Context, spec engine.CellSpec, s subject, t *tally) (result.Cell, error) {
	cfg := spec.Config
	addrs, f, err := members(ctx, spec, s, false)
	if err != nil {
		return result.Cell{}, err
	}
	fig := &result.EnsemblePartitionFigures{OwnEnsemble: f != nil}
	t.faults.EnsemblePartition = fig
	if f != nil {
		defer f.Close()
	}
	for r := range spec.Repeat {
		if err := partitionMemberOnce(ctx, spec, s, addrs, r, fig, t); err != nil {
			return t.cell(cfg.SessionTimeout, result.BoundSession), err
		}
	}
	return t.cell(cfg.SessionTimeout, result.BoundSession), nil
}

func partitionMemberOnce(ctx context.Context, spec engine.CellSpec, s subject, addrs []string, r int, fig *result.EnsemblePartitionFigures, t *tally) error {
	cfg := spec.Config
	name := lockName("partition", r)
	win := window(ensemble, cfg)
	ps, err := newProxies(addrs, 0, 0, cfg.Seed)
	if err != nil {
		return err
	}
	defer ps.Close()
	a, err := dial(ctx, s.Driver, cfg, s.on(ps.Addrs()), 0)
	if err != nil {
		return err
	}
	b, err := dial(ctx, s.Driver, cfg, s.on(addrs), 1)
	if err != nil {
		closeAll(t, a)
		return err
	}
	lost := func() int64 { return a.Counters().SessionLost.Load() + b.Counters().SessionLost.Load() }
	lostBefore := lost()
	defer func() {
		n := lost() - lostBefore
		t.update(func() { fig.SessionLost += n })
		closeAll(t, a, b)
	}()
	if err := prepare(ctx, a, name); err != nil {
		return err
	}
	la, aGot, err := first(ctx, t, a, name)
	if err != nil {
		return err
	}
	at := -1
	for i, p := range ps {
		if p.Active() > 0 {
			at = i
		}
	}
	if at < 0 {
		return errors.New("faults: partition: cannot tell which member the holder is connected to")
	}

	h := &holds{lock: name}
	ka := h.enter(0, aGot)
	bctx, cancel := context.WithTimeout(ctx, win+3*cfg.SessionTimeout+10*time.Second)
	defer cancel()
	var during sync.WaitGroup
	during.Go(func() {
		lb, got, err := acquire(bctx, t, b, name, cfg.Retry)
		if err != nil {
			return
		}
		t.update(func() { fig.AcquiresDuringCut++ })
		kb := h.enter(1, got)
		sleep(bctx, spec.Hold)
		h.exit(kb, time.Now())
		release(ctx, t, lb)
	})
	settle(ctx, 2*time.Second, b)

	cut := time.Now()
	ps[at].Cut()
	t.update(func() { fig.ServersCut++ })
	moved := watchMove(ctx, ps, at, win)
	sleep(ctx, win)
	h.exit(ka, time.Now())
	release(ctx, t, la)
	during.Wait()
	if when, ok := <-moved; ok {
		t.update(func() { fig.SessionMoved++ })
		t.recovered(when.Sub(cut))
	}
	// The holder, on its new member, can lock again during the cut.
	actx, cancel2 := context.WithTimeout(ctx, 2*cfg.SessionTimeout+5*time.Second)
	defer cancel2()
	if la, got, err := acquire(actx, t, a, name, cfg.Retry); err == nil {
		t.update(func() { fig.AcquiresDuringCut++ })
		k := h.enter(0, got)
		h.exit(k, time.Now())
		release(ctx, t, la)
	}
	t.violate(h.overlaps(t, time.Now())...)
	return nil
}
