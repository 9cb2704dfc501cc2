package faults

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

func init() {
	register(fault{name: "deadwait", applies: proxied, run: runDeadWait,
		description: "waiters die while queued (--clients − 2 of them: connections reset, no clean-up) behind a holder, which then releases: how long the live waiter behind them stalls, against how long the lock lets a dead waiter hold its place; a lock of the connection's: reset and silent"})
}

// runDeadWait: dead waiters. A holder holds; --clients − 2 waiters queue
// behind it one after another through proxies, then one live waiter
// behind them, directly; the dead waiters' connections are reset and no
// new one is let through (their process died: it neither cleans up nor
// comes back); the holder releases, and the stall is the time until the
// live waiter holds the lock. What it is depends on what the lock keeps of
// a waiter: Redisson's fair lock keeps its place in the queue until the
// place's wait timeout (5 minutes by default: redisson#3004, the wiki's
// "5 threads died, 25 seconds" of #1353); a ZooKeeper recipe's or etcd's
// waiter keeps a node or key until its session or lease ends; a server's
// queue (PostgreSQL, MariaDB) drops it with its connection — unless the
// connection fell silent, when the server grants it the lock and waits
// for its keepalive; a poller keeps nothing.
func runDeadWait(ctx context.Context, spec engine.CellSpec, s subject) (result.Cell, error) {
	if err := needServers(spec, s); err != nil {
		return result.Cell{}, err
	}
	dead := spec.Clients - 2
	if dead < 1 {
		return result.Cell{}, fmt.Errorf("%w: deadwait needs --clients ≥ 3 (a holder, the dead waiters, a live one), got %d", engine.ErrUsage, spec.Clients)
	}
	t := newTally(spec)
	bound, setting := s.DeadWaiterBound(spec.Config)
	fig := &result.DeadWaiterFigures{Dead: dead, BoundMs: ms(bound), BoundSetting: setting}
	t.faults.DeadWaiters = fig
	hows := []connCrash{crashReset}
	if s.Caps.Has(impl.LeaseConn) {
		hows = append(hows, crashSilent)
		fig.Silent = &result.DeadEnd{}
	}
	var stalls [2][]float64
	var err error
	for r := range spec.Repeat {
		for _, how := range hows {
			if err == nil {
				err = deadWaitOnce(ctx, spec, s, r, how, dead, bound, fig, &stalls, t)
			}
		}
	}
	t.update(func() {
		fig.Reset.StallMs = spread(stalls[crashReset])
		if fig.Silent != nil {
			fig.Silent.StallMs = spread(stalls[crashSilent])
		}
	})
	return t.cell(bound, s.leaseBound()), err
}

func deadWaitOnce(ctx context.Context, spec engine.CellSpec, s subject, r int, how connCrash, dead int, bound time.Duration,
	fig *result.DeadWaiterFigures, stalls *[2][]float64, t *tally) error {
	cfg := spec.Config
	name := fmt.Sprintf("deadwait-%d-%s", r, how)
	end := &fig.Reset
	if how == crashSilent {
		end = fig.Silent
	}
	c, err := deadCast(ctx, cfg, s, dead, t)
	defer c.close()
	if err != nil {
		return err
	}
	holder, deads, live, ps := c.holder, c.deads, c.live, c.ps
	var wg sync.WaitGroup
	defer func() { c.bury(); wg.Wait() }()
	gone := make([]chan struct{}, len(deads)) // closed as each dead waiter's goroutine ends
	c.gone = gone
	// The wait's bound: several of the lock's own, and for a silent
	// connection what the keepalive asked of the dead waiters' sessions
	// takes; a stall past it is counted, not waited out.
	wait := 3*bound + 10*time.Second
	if how == crashSilent {
		var k impl.Keepalive
		for _, d := range deads {
			if ka, ok := d.(impl.Keepaliver); ok {
				kctx, cancel := context.WithTimeout(ctx, setupTimeout)
				k, err = ka.Keepalive(kctx, silentKeepalive)
				cancel()
				if err != nil {
					return fmt.Errorf("faults: keepalive: %w", err)
				}
			}
		}
		wait = max(wait, silentWait(k)+time.Duration(dead)*silentWait(k))
	}
	t.update(func() { end.WaitMs = ms(wait) })

	h := &holds{lock: name}
	lease, got, err := first(ctx, t, holder, name)
	if err != nil {
		return err
	}
	held := h.enter(0, got)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	// The dead-to-be queue one after another, each settled before the
	// next, so that the queue's order is theirs; then the live waiter.
	for i, d := range deads {
		gone[i] = make(chan struct{})
		wg.Go(func() { defer close(gone[i]); deadWaiter(ctx, wctx, t, d, name, cfg.Retry) })
		settle(ctx, 2*time.Second, d)
	}
	liveAt := make(chan time.Time, 1)
	go func() {
		l, at, err := waitGrant(wctx, t, live, name, cfg.Retry)
		if err != nil {
			liveAt <- time.Time{}
			return
		}
		k := h.enter(1+dead, at)
		h.exit(k, time.Now())
		release(ctx, t, l)
		liveAt <- at
	}()
	settle(ctx, 2*time.Second, live)

	// They die: reset (or silenced), and none comes back.
	if how == crashReset {
		ps.Reset()
	}
	ps.Cut()
	rel := time.Now()
	h.exit(held, rel)
	if err := release(ctx, t, lease); err != nil {
		cancel()
		c.bury()
		wg.Wait()
		return fmt.Errorf("faults: the holder's release: %w", err)
	}
	at := <-liveAt
	cancel()
	c.bury()
	wg.Wait()
	t.violate(h.overlaps(t, time.Now())...)
	if at.IsZero() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		t.update(func() { end.Unfreed++ })
		return nil
	}
	t.update(func() { stalls[how] = append(stalls[how], ms(at.Sub(rel))) })
	t.recovered(at.Sub(rel))
	return nil
}

// deadCasting is a deadwait repeat's clients: the holder and the live
// waiter connected directly, the dead-to-be through proxies (ps).
type deadCasting struct {
	t      *tally
	ps     proxies
	holder impl.Locker
	deads  []impl.Locker
	live   impl.Locker
	buried bool
	// gone are closed as the dead waiters' goroutines end.
	gone []chan struct{}
}

// buryWait bounds how long bury waits for a dead waiter's goroutine to
// end before closing its client under it.
const buryWait = 5 * time.Second

// deadCast connects a deadwait repeat's clients; what it connected before
// an error is returned with it, for close.
func deadCast(ctx context.Context, cfg impl.Config, s subject, dead int, t *tally) (*deadCasting, error) {
	c := &deadCasting{t: t}
	var err error
	if c.ps, err = newProxies(s.targets(cfg.Servers), 0, 0, cfg.Seed); err != nil {
		return c, err
	}
	if c.holder, err = dial(ctx, s.Driver, cfg, cfg.Servers, 0); err != nil {
		return c, err
	}
	for i := range dead {
		d, err := dial(ctx, s.Driver, cfg, s.with(cfg.Servers, c.ps.Addrs()), 1+i)
		if err != nil {
			return c, err
		}
		c.deads = append(c.deads, d)
	}
	c.live, err = dial(ctx, s.Driver, cfg, cfg.Servers, 1+dead)
	return c, err
}

// bury ends the dead waiters, their waits cancelled: their proxies
// closed, each client closed once its goroutine has ended — a client is
// not to be closed under an Acquire (go-redis's dedicated connection is
// not) — or after buryWait, when a library is still cleaning up over the
// cut connection with a context of its own (etcd's Mutex.Lock unlocks with
// the client's when its wait is cancelled), which only Close ends. Their
// goroutines are the caller's to wait for afterwards.
func (c *deadCasting) bury() {
	if c.buried {
		return
	}
	c.buried = true
	c.ps.Close()
	// One deadline for them all, as a closed channel: a time.After's
	// value is taken by the first wait it ends, and the dead waiters after
	// it waited for ever (etcd's, whose calls hang on a cut connection).
	ctx, cancel := context.WithTimeout(context.Background(), buryWait)
	defer cancel()
	for i, d := range c.deads {
		if i < len(c.gone) && c.gone[i] != nil {
			select {
			case <-c.gone[i]:
			case <-ctx.Done():
			}
		}
		closeAll(c.t, d)
	}
}

// close buries the dead and closes the others.
func (c *deadCasting) close() {
	c.bury()
	var rest []impl.Locker
	for _, l := range []impl.Locker{c.holder, c.live} {
		if l != nil {
			rest = append(rest, l)
		}
	}
	closeAll(c.t, rest...)
}

// deadWaiter asks for the lock until wctx ends, as a waiter whose process
// is about to die. Once cut off it has no account of its own: its
// failures are the script's doing, and a grant its server makes to its
// dead connection (a silent one's) is not its holding — nothing of it is
// counted or recorded in the history. What it was granted is given back
// when the wait ends, to leave the server clean.
func deadWaiter(ctx, wctx context.Context, t *tally, l impl.Locker, name string, retry time.Duration) {
	for wctx.Err() == nil {
		lease, err := l.Acquire(wctx, name)
		if err != nil {
			sleep(wctx, retry)
			continue
		}
		<-wctx.Done()
		var failed int64
		releaseScripted(ctx, t, lease, &failed)
		return
	}
}
