package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/report"
)

// runPause: the holder stalls (a GC pause, a stopped VM) past its lease.
// A acquires and stalls; B, waiting, gets the lock once A's lease is gone
// and writes to the shared resource; then A wakes up and writes as though
// it still held the lock. Two resources take the writes: an unfenced one
// accepts A's stale write — a safety violation of kind "stale_write" — and
// a fenced one rejects it because B's token is higher.
//
// Tokens are ZooKeeper's sequence numbers (Lease.Fence); the Redis locks
// have none, so each holder draws one from a counter (see fencer).
//
// A Redis lease ends with its TTL whatever the holder does, so A just
// sleeps. A ZooKeeper lease ends with the session, which the client library
// keeps alive from its own goroutines; a stalled process sends nothing, so
// A's traffic goes through a proxy that is cut for the length of the stall.
func runPause(ctx context.Context, spec lockbench.CellSpec, d impl.Driver) (report.Cell, error) {
	fam := familyOf(d)
	t := newTally(spec)
	bound := fam.bound(spec.Config)
	if err := needServers(spec, fam); err != nil {
		return report.Cell{}, err
	}
	for r := range spec.Repeat {
		if err := pauseOnce(ctx, spec, d, fam, r, t); err != nil {
			return t.cell(bound, ""), err
		}
	}
	c := t.cell(bound, "")
	f := c.Faults
	stale := int64(f.Details["stale_writes"])
	var s string
	if f.RecoveryMs != nil {
		s = fmt.Sprintf("%s: a holder stalled past its %s lost the lock to another client after %s p50 (%s %s); ",
			c.Impl, fam.boundName(), fmtMs(f.RecoveryMs.P50), fam.boundName(), bound)
	} else {
		s = fmt.Sprintf("%s: no other client got the lock while the holder stalled; ", c.Impl)
	}
	s += fmt.Sprintf("its late write was stale in %d of %d repeats: accepted %d times without fencing, and with fencing accepted %d, rejected %d.",
		stale, f.Repeats, int64(f.Details["unfenced_accepted"]), f.StaleWritesAccepted, f.StaleWritesRejected)
	c.Verdict = s
	return c, nil
}

func pauseOnce(ctx context.Context, spec lockbench.CellSpec, d impl.Driver, fam family, r int, t *tally) error {
	cfg := spec.Config
	name := lockName("pause", r)
	bound := fam.bound(cfg)

	aServers := cfg.Servers
	var ps proxies
	if fam == famZK {
		var err error
		if ps, err = newProxies(fam.targets(cfg.Servers), 0, 0, cfg.Seed); err != nil {
			return err
		}
		defer ps.Close()
		aServers = fam.with(cfg.Servers, ps.Addrs())
	}
	a, err := dial(ctx, d, cfg, aServers, 0)
	if err != nil {
		return err
	}
	defer closeAll(t, a)
	b, err := dial(ctx, d, cfg, cfg.Servers, 1)
	if err != nil {
		return err
	}
	defer closeAll(t, b)
	if err := prepare(ctx, a, name); err != nil {
		return err
	}
	token, closeFence, err := tokens(ctx, fam, cfg, name)
	if err != nil {
		return err
	}
	defer closeFence()
	plain, fenced := &resource{}, &resource{fenced: true}

	lostBefore := a.Counters().SessionLost.Load()
	la, _, err := first(ctx, t, a, name)
	if err != nil {
		return err
	}
	ta, err := token(ctx, la)
	if err != nil {
		return err
	}

	// B waits, gets the lock once A's lease is gone, writes, and keeps the
	// lock until A has written.
	wctx, cancel := context.WithTimeout(ctx, 3*bound+10*time.Second)
	defer cancel()
	type grant struct {
		at    time.Time
		token uint64
		err   error
	}
	granted := make(chan grant, 1)
	aWrote := make(chan struct{})
	bDone := make(chan struct{})
	go func() {
		defer close(bDone)
		lb, at, err := acquire(wctx, t, b, name, cfg.Retry)
		if err != nil {
			granted <- grant{err: err}
			return
		}
		tb, err := token(wctx, lb)
		if err == nil {
			plain.Write(1, tb)
			fenced.Write(1, tb)
		}
		granted <- grant{at: at, token: tb, err: err}
		select {
		case <-aWrote:
		case <-wctx.Done():
		}
		release(ctx, t, lb)
	}()
	settle(ctx, 2*time.Second, b)

	// A stalls until B has written (B cannot before A's lease is gone), or
	// until B gave up.
	stalled := time.Now()
	if ps != nil {
		ps.Cut()
	}
	g := <-granted
	if g.err != nil {
		t.failed(g.err)
	}
	okPlain := plain.Write(0, ta)
	okFenced := fenced.Write(0, ta)
	close(aWrote)
	if ps != nil {
		// The stall ends: A's client reconnects and learns its session
		// expired. Released before it knows, the lease would fail with
		// "no server" rather than report the lock lost.
		for _, p := range ps {
			p.Heal()
		}
		awaitSessionLost(ctx, a, lostBefore, bound+5*time.Second)
	}
	<-bDone
	release(ctx, t, la)

	if g.err != nil {
		return ctx.Err()
	}
	t.recovered(g.at.Sub(stalled))
	// A wrote after B was granted the lock: the write is stale.
	t.add("stale_writes", 1)
	if okPlain {
		t.add("unfenced_accepted", 1)
		t.violate(report.Violation{Lock: name, Kind: "stale_write", Holder: 1, Intruder: 0,
			AtS: t.at(time.Now()), Token: ta, PrevToken: g.token})
	}
	t.stale(okFenced)
	return nil
}

// tokens returns how a holder learns its fencing token: the lease's own
// (ZooKeeper) or one drawn from a counter on the (first) Redis server.
func tokens(ctx context.Context, fam family, cfg impl.Config, name string) (func(context.Context, impl.Lease) (uint64, error), func(), error) {
	if fam == famZK {
		return func(_ context.Context, l impl.Lease) (uint64, error) {
			tok, ok := l.Fence()
			if !ok {
				return 0, fmt.Errorf("faults: lease has no fencing token")
			}
			return tok, nil
		}, func() {}, nil
	}
	f, err := newFencer(ctx, fam.targets(cfg.Servers)[0], cfg, name)
	if err != nil {
		return nil, nil, err
	}
	return func(ctx context.Context, _ impl.Lease) (uint64, error) { return f.Next(ctx) }, func() { f.Close() }, nil
}

// awaitSessionLost waits, at most max, until l has counted a session
// expiry beyond before.
func awaitSessionLost(ctx context.Context, l impl.Locker, before int64, max time.Duration) {
	deadline := time.Now().Add(max)
	for l.Counters().SessionLost.Load() == before && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
}
