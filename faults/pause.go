package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// runPause: the holder stalls (a GC pause, a stopped VM) past its lease.
// A acquires and stalls; B, waiting, gets the lock once A's lease is gone
// and writes to the shared resource; then A wakes up and writes as though
// it still held the lock. Two counters take the writes — the guarded
// register on the lock's servers (--guard, on by default here), which A
// read at its grant and B reads at its own, or, where the servers keep
// none or the guard is off, two resources in process: an unfenced one
// accepts A's stale write and a fenced one rejects it because B's token is
// higher. Which of them counts is the lock's: a lock with fencing tokens
// is unsafe only if the fenced resource accepted the write, one without
// them (its users have no token to send) when the unfenced one did; the
// violation is of kind "stale_write".
//
// Tokens are the lock's own (Lease.Fence) where it declares Fencing; a
// lock without them draws each holder's from the counter its servers keep
// (impl.Need.Fence: an INCR beside a Redis key, a node version beside a
// ZooKeeper lock). A lock with neither is not staged.
//
// A Redis lease ends with its TTL whatever the holder does, so A just
// sleeps. A ZooKeeper lease ends with the session, which the client library
// keeps alive from its own goroutines; a stalled process sends nothing, so
// A's traffic goes through a proxy that is cut for the length of the stall.
func runPause(ctx context.Context, spec engine.CellSpec, s subject) (result.Cell, error) {
	if s.Caps.Has(impl.LeaseConn) {
		return runPauseConn(ctx, spec, s)
	}
	t := newTally(spec)
	t.guarded = true
	if !s.Caps.Has(impl.Fencing) {
		t.tokens = result.TokensCounter
	}
	bound := s.bound(spec.Config)
	if err := needServers(spec, s); err != nil {
		return result.Cell{}, err
	}
	fig := &result.PauseFigures{LockFences: s.Caps.Has(impl.Fencing)}
	t.faults.Pause = fig
	cell := func() result.Cell {
		c := t.cell(bound, s.leaseBound())
		if s.Lease != nil { // the driver's own setting bounds it, as for a crash
			_, c.Faults.BoundSetting = s.Lease(spec.Config)
		}
		return c
	}
	for r := range spec.Repeat {
		if err := pauseOnce(ctx, spec, s, r, fig, t); err != nil {
			return cell(), err
		}
	}
	return cell(), nil
}

func pauseOnce(ctx context.Context, spec engine.CellSpec, s subject, r int, fig *result.PauseFigures, t *tally) error {
	cfg := spec.Config
	name := lockName("pause", r)
	bound := s.bound(cfg)
	c, err := newPauseCast(ctx, s, cfg, name, t)
	if err != nil {
		return err
	}
	defer c.close(t)
	plain, fenced := &resource{}, &resource{fenced: true}

	lostBefore := c.a.Counters().SessionLost.Load()
	la, _, err := first(ctx, t, c.a, name)
	if err != nil {
		return err
	}
	ta, err := c.token(ctx, la)
	if err != nil {
		return err
	}
	c.drawn(ctx, t, c.a, name, la, ta)

	// B waits, gets the lock once A's lease is gone, writes, and keeps the
	// lock until A has written.
	wctx, cancel := context.WithTimeout(ctx, 3*bound+10*time.Second)
	defer cancel()
	aWrote := make(chan struct{})
	granted, bDone := c.challenger(ctx, wctx, t, name, cfg.Retry, plain, fenced, aWrote)
	settle(ctx, 2*time.Second, c.b)

	// A stalls until B has written (B cannot before A's lease is gone), or
	// until B gave up.
	stalled := time.Now()
	if c.ps != nil {
		c.ps.Cut()
	}
	g := <-granted
	if g.err != nil {
		t.failed(g.err)
	}
	okPlain, okFenced := c.write(ctx, t, la, ta, plain, fenced)
	close(aWrote)
	if c.ps != nil {
		// The stall ends: A's client reconnects and learns its session
		// expired. Released before it knows, the lease would fail with
		// "no server" rather than report the lock lost.
		for _, p := range c.ps {
			p.Heal()
		}
		awaitSessionLost(ctx, c.a, lostBefore, bound+5*time.Second)
	}
	<-bDone
	release(ctx, t, la)

	if g.err != nil {
		return ctx.Err()
	}
	t.recovered(g.at.Sub(stalled))
	// A wrote after B was granted the lock: the write is stale.
	t.update(func() {
		fig.StaleWrites++
		if okPlain {
			fig.UnfencedAccepted++
		}
	})
	if okPlain {
		t.unfencedStale()
	}
	// The lock's users write the way the lock lets them: with its fencing
	// token where it has one, else unfenced (lockbench's counter tokens
	// only show what fencing would do). A stale write accepted there
	// breaks mutual exclusion; one the token turned away is a stale
	// grant, fenced: the remedy working, not a violation.
	accepted := okPlain
	if s.Caps.Has(impl.Fencing) {
		accepted = okFenced
	}
	if accepted {
		t.violate(result.Violation{Lock: name, Kind: "stale_write", Holder: 1, Intruder: 0,
			AtS: t.at(time.Now()), Token: ta, PrevToken: g.token})
	}
	t.stale(okFenced)
	return nil
}

// pauseCast is a pause repeat's clients: A, which stalls — behind proxies
// where its lease is a session, since a stalled process sends nothing but
// its client library would — and B, which waits; and where tokens come from.
type pauseCast struct {
	a, b       impl.Locker
	ps         proxies
	token      func(context.Context, impl.Lease) (uint64, error)
	closeFence func()
}

func newPauseCast(ctx context.Context, s subject, cfg impl.Config, name string, t *tally) (c *pauseCast, err error) {
	c = &pauseCast{closeFence: func() {}}
	defer func() {
		if err != nil {
			c.close(t)
		}
	}()
	aServers := cfg.Servers
	if s.Caps.Has(impl.LeaseSession) {
		if c.ps, err = newProxies(s.targets(cfg.Servers), 0, 0, cfg.Seed); err != nil {
			return c, err
		}
		aServers = s.with(cfg.Servers, c.ps.Addrs())
	}
	if c.a, err = dial(ctx, s.Driver, cfg, aServers, 0); err != nil {
		return c, err
	}
	if c.b, err = dial(ctx, s.Driver, cfg, cfg.Servers, 1); err != nil {
		return c, err
	}
	if err = prepare(ctx, c.a, name); err != nil {
		return c, err
	}
	c.token, c.closeFence, err = tokens(ctx, s, cfg, name)
	return c, err
}

func (c *pauseCast) close(t *tally) {
	closeAll(t, c.a, c.b)
	if c.ps != nil {
		c.ps.Close()
	}
	if c.closeFence != nil {
		c.closeFence()
	}
}

// pauseGrant is B's grant: when, with which token, or why not.
type pauseGrant struct {
	at    time.Time
	token uint64
	err   error
}

// challenger runs B: it acquires, writes to both resources with its token
// and holds the lock until A has written (aWrote) or wctx ends.
func (c *pauseCast) challenger(ctx, wctx context.Context, t *tally, name string, retry time.Duration,
	plain, fenced *resource, aWrote <-chan struct{}) (<-chan pauseGrant, <-chan struct{}) {
	granted := make(chan pauseGrant, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		lb, at, err := acquire(wctx, t, c.b, name, retry)
		if err != nil {
			granted <- pauseGrant{err: err}
			return
		}
		tb, err := c.token(wctx, lb)
		switch {
		case err != nil:
		case t.guarding(): // B writes the register before it releases
			c.drawn(wctx, t, c.b, name, lb, tb)
		default:
			plain.Write(1, tb)
			fenced.Write(1, tb)
		}
		granted <- pauseGrant{at: at, token: tb, err: err}
		select {
		case <-aWrote:
		case <-wctx.Done():
		}
		release(ctx, t, lb)
	}()
	return granted, done
}

// tokens returns how a holder learns its fencing token: the lease's own
// where the driver offers fencing, or else one drawn from the counter the
// lock's servers keep.
func tokens(ctx context.Context, s subject, cfg impl.Config, name string) (func(context.Context, impl.Lease) (uint64, error), func(), error) {
	if s.Caps.Has(impl.Fencing) {
		return func(_ context.Context, l impl.Lease) (uint64, error) {
			tok, ok := l.Fence()
			if !ok {
				return 0, fmt.Errorf("faults: lease has no fencing token")
			}
			return tok, nil
		}, func() {}, nil
	}
	if s.need.Fence == nil { // fenceable refuses such a lock first
		return nil, nil, fmt.Errorf("faults: %s has no fencing tokens and its servers keep no counter", s.Name)
	}
	f, err := s.need.Fence(ctx, cfg, s.targets(cfg.Servers), name)
	if err != nil {
		return nil, nil, fmt.Errorf("faults: %w", err)
	}
	return func(ctx context.Context, _ impl.Lease) (uint64, error) { return f.Next(ctx) }, func() { f.Close() }, nil
}

// drawn shows the guarded register a holder's token drawn after its grant
// (the lock has none of its own): the read at the grant showed none.
func (c *pauseCast) drawn(ctx context.Context, t *tally, l impl.Locker, name string, lease impl.Lease, token uint64) {
	if t.guarding() && t.tokens == result.TokensCounter {
		t.guardRead(ctx, l, name, lease, token)
	}
}

// write is A's write after its stall, which it read before: to the guarded
// register where the lock's servers keep one, else to the in-process
// resources. It says whether the unfenced and the fenced counter took it.
func (c *pauseCast) write(ctx context.Context, t *tally, la impl.Lease, ta uint64, plain, fenced *resource) (bool, bool) {
	if !t.guarding() {
		return plain.Write(0, ta), fenced.Write(0, ta)
	}
	w, ok := t.guardWrite(ctx, la)
	return ok, ok && w.FencedAccepted
}

// awaitSessionLost waits, at most max, until l has counted a session
// expiry beyond before.
func awaitSessionLost(ctx context.Context, l impl.Locker, before int64, max time.Duration) {
	deadline := time.Now().Add(max)
	for l.Counters().SessionLost.Load() == before && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
}
