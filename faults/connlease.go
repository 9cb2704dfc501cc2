package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/result"
)

// A lock whose grant is its holder's connection (impl.LeaseConn) has no
// timer: the server frees it when it sees the connection end. Its crash is
// therefore two crashes. A cut connection — the holder's process died, and
// its kernel answers the next segment with a reset — is seen at once. A
// silent one — the holder's host dropped off the network — is seen only
// when the server's TCP keepalive gives up on the peer; behind a proxy, a
// NAT or a load balancer, whose kernel answers the probes for the holder,
// never. The scenario measures both and states the keepalive in force.

// silentKeepalive is the keepalive asked of a silent holder's session,
// the shortest PostgreSQL takes: 1 s idle, then a probe a second, given
// up after 2. A server that lets no session choose keeps its own.
var silentKeepalive = impl.Keepalive{Idle: time.Second, Interval: time.Second, Count: 2}

// silentWait bounds the wait for a silent holder's lock to be freed:
// twice what the keepalive in force would take against a peer that
// stopped answering, within [5 s, 10 s]. Longer keepalives (the system's
// default is two hours) are not waited out: the figures say so
// (ConnEnd.Unfreed within SilentWaitMs).
func silentWait(k impl.Keepalive) time.Duration {
	return min(max(2*k.Bound()+2*time.Second, 5*time.Second), 10*time.Second)
}

// connCrash is how a holder's connection ends in one crash.
type connCrash int

const (
	crashReset  connCrash = iota // the proxy resets it: RST
	crashSilent                  // the proxy falls silent: no FIN, no RST
)

func (c connCrash) String() string { return [...]string{"reset", "silent"}[c] }

// crashConnOnce is one repeat of one way of crashing on a LeaseConn lock:
// the holder goes through a proxy, waiters connect directly and queue; the
// proxy resets or silences the holder's connection, and the time until a
// waiter holds the lock is the recovery. A silent holder not freed within
// silentWait is counted as such (ConnEnd.Unfreed), not as an error.
func crashConnOnce(ctx context.Context, spec engine.CellSpec, s subject, r int, how connCrash, g *connCrashes, t *tally) error {
	waiters := g.fig.Waiters
	cfg := spec.Config
	name := fmt.Sprintf("crash-%d-%s", r, how)
	ps, ls, err := crashCast(ctx, cfg, s, waiters)
	defer func() { ps.Close(); closeAll(t, ls...) }()
	if err != nil {
		return err
	}
	holder := ls[0]
	wait := 10*time.Second + time.Duration(waiters)*(spec.Hold+time.Second)
	if how == crashSilent {
		k, err := keepaliveOf(ctx, holder, g.fig, t)
		if err != nil {
			return err
		}
		wait = silentWait(k)
		t.update(func() { g.fig.SilentWaitMs = ms(wait) })
	}
	h := &holds{lock: name}
	_, got, err := first(ctx, t, holder, name)
	if err != nil {
		return err
	}
	held := h.enter(0, got)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	firstAt := queue(ctx, wctx, t, h, ls[1:], spec.Hold, func(wctx context.Context, w impl.Locker) (impl.Lease, time.Time, error) {
		return waitGrant(wctx, t, w, name, cfg.Retry)
	})
	settle(ctx, 2*time.Second, ls[1:]...)

	cut := time.Now()
	if how == crashReset {
		ps.Reset()
	} else {
		ps.Cut()
	}
	h.exit(held, cut)
	at := <-firstAt
	// A silent holder's connection, still open on the server, is closed
	// now, so that the waiters still queued get the lock and end.
	ps.Close()
	cancel()
	t.violate(h.overlaps(t, time.Now())...)
	if at.IsZero() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		t.update(func() { g.end(how).Unfreed++ })
		return nil
	}
	t.update(func() {
		g.end(how).Recovered++
		g.recovery[how] = append(g.recovery[how], ms(at.Sub(cut)))
	})
	if how == crashReset {
		t.recovered(at.Sub(cut)) // the cell's recovery: the one a TTL's compares with
	}
	return nil
}

// connCrashes gathers a connection lock's crash figures over the
// repeats, with each way of crashing's recovery times (ms) until the cell
// summarises them.
type connCrashes struct {
	fig      *result.ConnCrashFigures
	recovery [2][]float64 // by connCrash
}

func (g *connCrashes) end(how connCrash) *result.ConnEnd {
	if how == crashReset {
		return &g.fig.Reset
	}
	return &g.fig.Silent
}

// keepaliveOf asks the holder's server for the silent keepalive and
// records what is in force; a driver that cannot say leaves it unknown.
func keepaliveOf(ctx context.Context, l impl.Locker, fig *result.ConnCrashFigures, t *tally) (impl.Keepalive, error) {
	ka, ok := l.(impl.Keepaliver)
	if !ok {
		t.update(func() { fig.Keepalive = &result.Keepalive{} })
		return impl.Keepalive{}, nil
	}
	kctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	k, err := ka.Keepalive(kctx, silentKeepalive)
	if err != nil {
		return k, fmt.Errorf("faults: keepalive: %w", err)
	}
	t.update(func() {
		fig.Keepalive = &result.Keepalive{Reported: true, IdleS: k.Idle.Seconds(), IntervalS: k.Interval.Seconds(),
			Count: k.Count, Source: k.Source}
	})
	return k, nil
}

// queue has every waiter ask for the lock by grant until wctx ends; each
// that gets it holds it hold (as its client in h) and releases it. The
// channel carries when the first was granted, zero when none was before
// wctx ended, once every waiter is done.
func queue(ctx, wctx context.Context, t *tally, h *holds, ws []impl.Locker, hold time.Duration,
	grant func(wctx context.Context, w impl.Locker) (impl.Lease, time.Time, error)) <-chan time.Time {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first time.Time
	)
	for i, w := range ws {
		wg.Go(func() {
			lease, now, err := grant(wctx, w)
			if err != nil {
				return
			}
			mu.Lock()
			if first.IsZero() {
				first = now
			}
			mu.Unlock()
			k := h.enter(1+i, now)
			sleep(ctx, hold)
			h.exit(k, time.Now())
			release(ctx, t, lease)
		})
	}
	out := make(chan time.Time, 1)
	go func() {
		wg.Wait()
		out <- first
	}()
	return out
}

// waitGrant is acquire for a waiter whose wait has a bound of the
// script's: the end of wctx is the script's doing, not an error.
func waitGrant(wctx context.Context, t *tally, l impl.Locker, name string, retry time.Duration) (impl.Lease, time.Time, error) {
	start := time.Now()
	for {
		call := time.Now()
		lease, err := l.Acquire(wctx, name)
		t.acquiredOp(l, name, call, lease, err)
		if err == nil {
			got := time.Now()
			t.acquired(got.Sub(start))
			return lease, got, nil
		}
		if wctx.Err() != nil {
			return nil, time.Time{}, wctx.Err()
		}
		t.failed(err)
		if err := sleep(wctx, retry); err != nil {
			return nil, time.Time{}, err
		}
	}
}

// runCrashConn is crash for a LeaseConn lock: every repeat crashes a
// holder both ways, a reset connection and a silent one, each on a lock
// of its own with waiters queued behind it.
func runCrashConn(ctx context.Context, spec engine.CellSpec, s subject) (result.Cell, error) {
	t := newTally(spec)
	if err := needServers(spec, s); err != nil {
		return result.Cell{}, err
	}
	g := &connCrashes{fig: &result.ConnCrashFigures{Waiters: max(spec.Clients-1, 1)}}
	t.faults.ConnCrash = g.fig
	var err error
	for r := range spec.Repeat {
		for _, how := range []connCrash{crashReset, crashSilent} {
			if err == nil {
				err = crashConnOnce(ctx, spec, s, r, how, g, t)
			}
		}
	}
	t.update(func() {
		g.fig.Reset.RecoveryMs, g.fig.Silent.RecoveryMs = spread(g.recovery[crashReset]), spread(g.recovery[crashSilent])
	})
	return t.cell(0, s.leaseBound()), err
}

// OptPauseFor is how long the pause scenario's holder of a lock without a
// lease of its own (LeaseConn) stalls.
const OptPauseFor = "pause-for"

// DefaultPauseFor is the stall when OptPauseFor is unset.
const DefaultPauseFor = 2 * time.Second

// PauseForOption declares OptPauseFor.
var PauseForOption = impl.DurationOption(OptPauseFor, DefaultPauseFor, time.Millisecond,
	"pause: how long a holder of a lock that lasts as long as its connection stalls")

// runPauseConn is pause for a LeaseConn lock: the holder stalls
// --pause-for holding the lock, its connection open and idle, the other
// clients queued behind it. Nothing on the server ends such a grant, so
// the holder keeps it: no other client may hold it before the holder
// wakes and releases, and the waiters stall as long as the pause (the
// figure is the first grant after it began).
func runPauseConn(ctx context.Context, spec engine.CellSpec, s subject) (result.Cell, error) {
	pause, err := optDuration(spec.Config, OptPauseFor, DefaultPauseFor)
	if err != nil {
		return result.Cell{}, err
	}
	if err := needServers(spec, s); err != nil {
		return result.Cell{}, err
	}
	t := newTally(spec)
	fig := &result.ConnPauseFigures{PauseMs: ms(pause)}
	t.faults.ConnPause = fig
	for r := range spec.Repeat {
		if err := pauseConnOnce(ctx, spec, s, pause, r, fig, t); err != nil {
			return t.cell(pause, ""), err
		}
	}
	return t.cell(pause, ""), nil
}

func pauseConnOnce(ctx context.Context, spec engine.CellSpec, s subject, pause time.Duration, r int, fig *result.ConnPauseFigures, t *tally) error {
	cfg := spec.Config
	name := lockName("pause", r)
	a, err := dial(ctx, s.Driver, cfg, cfg.Servers, 0)
	if err != nil {
		return err
	}
	ws := make([]impl.Locker, max(spec.Clients-1, 1))
	defer func() { closeAll(t, ws...) }()
	for i := range ws {
		if ws[i], err = dial(ctx, s.Driver, cfg, cfg.Servers, 1+i); err != nil {
			return err
		}
	}
	h := &holds{lock: name}
	la, aGot, err := first(ctx, t, a, name)
	if err != nil {
		return err
	}
	ka := h.enter(0, aGot)
	wctx, cancel := context.WithTimeout(ctx, pause+10*time.Second+time.Duration(len(ws))*(spec.Hold+time.Second))
	defer cancel()
	firstAt := queue(ctx, wctx, t, h, ws, spec.Hold, func(wctx context.Context, w impl.Locker) (impl.Lease, time.Time, error) {
		return waitGrant(wctx, t, w, name, cfg.Retry)
	})
	settle(ctx, 2*time.Second, ws...)

	stalled := time.Now()
	if err := sleep(ctx, pause); err != nil {
		return err
	}
	woke := time.Now()
	// A wakes and goes on as the lock's holder: its write, then its release.
	h.exit(ka, woke)
	if err := releaseBounded(ctx, la); err != nil {
		if errors.Is(err, impl.ErrLockLost) {
			t.update(func() { fig.HolderLost++ })
		} else {
			t.failed(err)
		}
	}
	at := <-firstAt
	t.violate(h.overlaps(t, time.Now())...)
	t.update(func() { fig.PausedMsMax = max(fig.PausedMsMax, ms(woke.Sub(stalled))) })
	if at.IsZero() {
		t.update(func() { fig.Unrecovered++ })
		return ctx.Err()
	}
	if at.Before(woke) {
		t.update(func() { fig.GrantedDuringPause++ })
	}
	// The waiter's stall: from the pause's start to its grant.
	t.recovered(at.Sub(stalled))
	return nil
}

// runRestartConn is restart for a LeaseConn lock: the server, one of its
// kind started for the scenario (it must be killed), is killed and
// restarted while A holds the lock. The restart forgets every grant; A
// does not know and goes on as the holder. B asks from the crash on,
// reconnecting as its driver does, and when it is granted the lock while
// A still holds it the checker counts a violation. A's release, once B
// is done, says whether the driver noticed (impl.ErrLockLost).
func runRestartConn(ctx context.Context, spec engine.CellSpec, s subject) (result.Cell, error) {
	if s.kind.Name == "" {
		return result.Cell{}, fmt.Errorf("%w: scenario restart: lockbench cannot start %s servers", engine.ErrNotApplicable, s.need.Kind)
	}
	t := newTally(spec)
	sctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	f, err := sandbox.Start(sctx, sandbox.Spec{s.need.Kind: 1})
	if err != nil {
		return result.Cell{}, err
	}
	defer f.Close()
	fig := &result.ConnRestartFigures{}
	t.faults.ConnRestart, t.faults.OwnServers = fig, true
	for r := range spec.Repeat {
		if err := restartConnOnce(ctx, spec, s, f.Servers[s.need.Kind][0], r, fig, t); err != nil {
			return t.cell(0, ""), err
		}
	}
	return t.cell(0, ""), nil
}

func restartConnOnce(ctx context.Context, spec engine.CellSpec, s subject, srv *sandbox.Server, r int, fig *result.ConnRestartFigures, t *tally) error {
	cfg := spec.Config
	name := lockName("restart", r)
	servers := s.on([]string{srv.Addr})
	a, b, err := dialPair(ctx, s.Driver, cfg, servers)
	if err != nil {
		return err
	}
	defer closeAll(t, a, b)
	la, aGot, err := first(ctx, t, a, name)
	if err != nil {
		return err
	}
	h := &holds{lock: name}
	ka := h.enter(0, aGot)
	crashed := time.Now()
	if err := srv.Kill(); err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	if err := srv.Restart(rctx); err != nil {
		return err
	}
	restarted := ms(time.Since(crashed))
	t.update(func() { fig.RestartMsMax = max(fig.RestartMsMax, restarted) })
	bctx, cancel := context.WithTimeout(ctx, 10*time.Second+spec.Hold)
	defer cancel()
	// A holds on, believing the lock its own, until B is done.
	<-challenge(ctx, bctx, t, h, b, name, cfg.Retry, spec.Hold, crashed)
	h.exit(ka, time.Now())
	err = releaseBounded(ctx, la)
	vs := h.overlaps(t, time.Now())
	t.violate(vs...)
	t.update(func() {
		switch {
		case err == nil:
			fig.HolderReleaseOK++
		case errors.Is(err, impl.ErrLockLost):
			fig.HolderReleaseLost++
		default:
			fig.HolderReleaseFailed++
		}
		if len(vs) > 0 {
			fig.OverlappingRepeats++
		}
	})
	return nil
}
