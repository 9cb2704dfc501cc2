package faults

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/result"
)

// runRestart: a Redlock master forgets a grant. Of five masters of its
// own, A reaches only three (two are cut off behind proxies), so its grant
// rests on exactly a majority. One of those three is killed and restarted
// empty — nothing is persisted — and B, which reaches all five, asks for
// the lock: the restarted master and the two A never reached make a
// majority for B while A's lease is still valid.
//
// The remedy Redlock's author gives is to keep a restarted master out for
// at least the TTL; with Options["redlock-restart-delay"] ≥ TTL the master
// comes back only then, and B can only get the lock once A's keys expired.
//
// A holds until its validity ends by its own reckoning (TTL − drift from
// the start of its Acquire), so B's grant before that is a violation.
func runRestart(ctx context.Context, spec engine.CellSpec, s subject) (result.Cell, error) {
	if s.Caps.Has(impl.LeaseConn) {
		return runRestartConn(ctx, spec, s)
	}
	cfg := spec.Config
	delay, err := optDuration(cfg, OptRestartDelay, 0)
	if err != nil {
		return result.Cell{}, err
	}
	t := newTally(spec)
	fig := &result.RestartFigures{RestartDelayMs: ms(delay)}
	t.faults.Restart, t.faults.OwnServers = fig, true
	sctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	f, err := sandbox.Start(sctx, sandbox.Spec{s.need.Kind: s.need.Count})
	if err != nil {
		return result.Cell{}, err
	}
	defer f.Close()
	for r := range spec.Repeat {
		if err := restartOnce(ctx, spec, s, f, delay, r, fig, t); err != nil {
			return t.cell(cfg.TTL, result.BoundTTL), err
		}
	}
	return t.cell(cfg.TTL, result.BoundTTL), nil
}

func restartOnce(ctx context.Context, spec engine.CellSpec, s subject, f *sandbox.Fleet, delay time.Duration, r int, fig *result.RestartFigures, t *tally) error {
	cfg := spec.Config
	name := lockName("restart", r)
	ps, err := newProxies(f.Addrs(s.need.Kind), 0, 0, cfg.Seed)
	if err != nil {
		return err
	}
	defer ps.Close()
	ps[3].Cut()
	ps[4].Cut()
	a, err := dial(ctx, s.Driver, cfg, s.on(ps.Addrs()), 0)
	if err != nil {
		return err
	}
	defer closeAll(t, a)
	b, err := dial(ctx, s.Driver, cfg, s.on(f.Addrs(s.need.Kind)), 1)
	if err != nil {
		return err
	}
	defer closeAll(t, b)

	start := time.Now()
	la, aGot, err := first(ctx, t, a, name)
	if err != nil {
		return err
	}
	// The same allowance the Redlock algorithm subtracts.
	validEnd := start.Add(cfg.TTL - cfg.TTL/100 - 2*time.Millisecond)
	if q, ok := a.(quorumReporter); ok {
		n := q.MastersGranted()
		t.update(func() { fig.FirstHolderMasters = n })
	}

	h := &holds{lock: name}
	ka := h.enter(0, aGot)
	lost := f.Servers[s.need.Kind][0]
	crashed := time.Now()
	if err := lost.Kill(); err != nil {
		return err
	}
	bctx, cancel := context.WithTimeout(ctx, delay+3*cfg.TTL+10*time.Second)
	defer cancel()
	done := challenge(ctx, bctx, t, h, b, name, cfg.Retry, spec.Hold, crashed)
	restartErr := func() error {
		if err := sleep(ctx, delay); err != nil {
			return err
		}
		rctx, cancel := context.WithTimeout(ctx, setupTimeout)
		defer cancel()
		return lost.Restart(rctx)
	}()
	// A's lease is over by its own reckoning at validEnd; it stops there.
	sleep(ctx, time.Until(validEnd))
	h.exit(ka, validEnd)
	release(ctx, t, la)
	<-done
	if restartErr != nil {
		return restartErr
	}
	vs := h.overlaps(t, time.Now())
	t.violate(vs...)
	if len(vs) > 0 {
		t.update(func() { fig.OverlappingRepeats++ })
	}
	return nil
}

// quorumReporter is a quorum lock's client that can say how many masters
// granted its lock: the most that said yes to one of its acquire
// attempts. The restart scenario shows with it that the first holder's
// grant rests on a bare majority.
type quorumReporter interface {
	MastersGranted() int
}
