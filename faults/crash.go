package faults

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// runCrash: the holder dies. Its traffic goes through proxies, which are
// cut right after its grant: no Release, no Close, no closeSession reaches
// a server, as when the process is killed or its host drops off the
// network. Waiters, connected directly, are queued when it happens; the
// time from the cut until the first of them holds the lock is the cost of
// the crash, bounded by the TTL (Redis locks: the key must expire) or the
// session timeout (ZooKeeper: the session must expire, on the server's
// tick). Each waiter then takes the lock once, holding it spec.Hold, and
// any two holders overlapping is a violation.
func runCrash(ctx context.Context, spec engine.CellSpec, s subject) (result.Cell, error) {
	if s.Caps.Has(impl.LeaseConn) {
		return runCrashConn(ctx, spec, s)
	}
	t := newTally(spec)
	bound := s.bound(spec.Config)
	if err := needServers(spec, s); err != nil {
		return result.Cell{}, err
	}
	fig := &result.CrashFigures{Waiters: max(spec.Clients-1, 1)}
	t.faults.Crash = fig
	cell := func() result.Cell {
		c := t.cell(bound, s.leaseBound())
		if s.Lease != nil {
			_, c.Faults.BoundSetting = s.Lease(spec.Config)
		}
		return c
	}
	for r := range spec.Repeat {
		if err := crashOnce(ctx, spec, s, r, fig, t); err != nil {
			return cell(), err
		}
	}
	return cell(), nil
}

func crashOnce(ctx context.Context, spec engine.CellSpec, s subject, r int, fig *result.CrashFigures, t *tally) error {
	waiters := fig.Waiters
	cfg := spec.Config
	name := lockName("crash", r)
	bound := s.bound(cfg)
	ps, ls, err := crashCast(ctx, cfg, s, waiters)
	defer func() { ps.Close(); closeAll(t, ls...) }()
	if err != nil {
		return err
	}
	holder := ls[0]
	if err := prepare(ctx, holder, name); err != nil {
		return err
	}
	h := &holds{lock: name}

	// The lease is never released: the holder is dead.
	_, got, err := first(ctx, t, holder, name)
	if err != nil {
		return err
	}
	held := h.enter(0, got)

	// Waiters give up after several bounds: recovery that slow is a
	// finding, not a hang.
	wctx, cancel := context.WithTimeout(ctx, 3*bound+10*time.Second+time.Duration(waiters)*(spec.Hold+time.Second))
	defer cancel()
	firstAt := queue(ctx, wctx, t, h, ls[1:], spec.Hold, func(wctx context.Context, w impl.Locker) (impl.Lease, time.Time, error) {
		return acquire(wctx, t, w, name, cfg.Retry)
	})
	settle(ctx, 2*time.Second, ls[1:]...)

	cut := time.Now()
	ps.Cut()
	h.exit(held, cut)
	first := <-firstAt
	t.violate(h.overlaps(t, time.Now())...)
	if first.IsZero() {
		t.update(func() { fig.Unrecovered++ })
		return ctx.Err()
	}
	t.recovered(first.Sub(cut))
	return nil
}

// crashCast is a crash's clients: a holder whose traffic goes through
// proxies (ps), so that it can be cut off, and waiters connected
// directly. ls[0] is the holder. What was opened before an error is
// returned with it, for the caller to close.
func crashCast(ctx context.Context, cfg impl.Config, s subject, waiters int) (ps proxies, ls []impl.Locker, err error) {
	if ps, err = newProxies(s.targets(cfg.Servers), 0, 0, cfg.Seed); err != nil {
		return ps, nil, err
	}
	holder, err := dial(ctx, s.Driver, cfg, s.with(cfg.Servers, ps.Addrs()), 0)
	if err != nil {
		return ps, nil, err
	}
	ls = []impl.Locker{holder}
	for i := range waiters {
		w, err := dial(ctx, s.Driver, cfg, cfg.Servers, 1+i)
		if err != nil {
			return ps, ls, err
		}
		ls = append(ls, w)
	}
	return ps, ls, nil
}
