package faults

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/result"
)

// runFailover: the server that granted the lock is lost while the lock is
// held, and a second client asks for the same lock. A holds for a window
// well inside its lease (half the TTL; one and a half session timeouts for
// ZooKeeper, long enough for an expiry to show) and then releases; B
// overlapping A's window is a violation.
//
//   - replicated (one Redis, a TTL lease): a master with an asynchronous
//     replica, as the server kind starts it (sandbox.Kind.Replicate). The
//     replica follows through a proxy that is cut before A's grant —
//     replication lag made deterministic — then the master is killed
//     (SIGKILL) and the replica promoted (Kind.Promote). B asks the
//     promoted replica, which never heard of A's key: B gets the lock at
//     once, every repeat.
//   - masters (a quorum lock: Redlock): five masters; one of them is
//     killed right after A's grant. The other four still hold A's key, so
//     B cannot reach a majority until A releases.
//   - ensemble (a session lease on members the kind tells apart:
//     ZooKeeper): three members; A is connected to a follower, which is
//     killed. A's session moves to another member within the session
//     timeout and keeps A's node, so B waits until A releases.
//
// The runner starts these servers itself (it must kill them) and restarts
// what it killed between repeats.
func runFailover(ctx context.Context, spec engine.CellSpec, s subject) (result.Cell, error) {
	t := newTally(spec)
	fig := &result.FailoverFigures{Staged: failoverStaged[s.layout()]}
	t.faults.Failover, t.faults.OwnServers = fig, true
	var err error
	switch s.layout() {
	case replicated:
		err = failoverReplica(ctx, spec, s, fig, t)
	case masters:
		err = failoverMaster(ctx, spec, s, fig, t)
	case ensemble:
		err = failoverMember(ctx, spec, s, fig, t)
	}
	return t.cell(s.bound(spec.Config), s.leaseBound()), err
}

var failoverStaged = map[layout]result.Failover{
	replicated: result.FailoverReplica,
	masters:    result.FailoverMaster,
	ensemble:   result.FailoverFollower,
}

// window is how long A holds after the failure.
func window(l layout, cfg impl.Config) time.Duration {
	if l == ensemble {
		return cfg.SessionTimeout * 3 / 2
	}
	return cfg.TTL / 2
}

// contend runs the second half of a failover repeat: A holds lease until
// the window after the failure ends, then releases; B, already connected,
// asks for the lock from the failure on and holds it spec.Hold. It returns
// whether the two overlapped.
func contend(ctx context.Context, spec engine.CellSpec, fig *result.FailoverFigures, t *tally, name string, a, b impl.Locker, la impl.Lease, aGot, failed time.Time, win time.Duration) bool {
	h := &holds{lock: name}
	ka := h.enter(0, aGot)
	bctx, cancel := context.WithTimeout(ctx, win+2*max(spec.Config.TTL, spec.Config.SessionTimeout)+10*time.Second)
	defer cancel()
	done := challenge(ctx, bctx, t, h, b, name, spec.Config.Retry, spec.Hold, failed)
	sleep(ctx, time.Until(failed.Add(win)))
	h.exit(ka, time.Now())
	releaseScripted(ctx, t, la, &fig.HolderReleaseFailed)
	<-done
	vs := h.overlaps(t, time.Now())
	t.violate(vs...)
	t.update(func() {
		fig.HoldWindowMs = ms(win)
		if len(vs) > 0 {
			fig.OverlappingRepeats++
		}
	})
	return len(vs) > 0
}

func failoverReplica(ctx context.Context, spec engine.CellSpec, s subject, fig *result.FailoverFigures, t *tally) error {
	cfg := spec.Config
	win := window(replicated, cfg)
	for r := range spec.Repeat {
		err := func() error {
			name := lockName("failover", r)
			sctx, cancel := context.WithTimeout(ctx, setupTimeout)
			defer cancel()
			f, err := sandbox.Start(sctx, sandbox.Spec{s.need.Kind: 1})
			if err != nil {
				return err
			}
			defer f.Close()
			master := f.Servers[s.need.Kind][0]
			link, err := NewProxy(master.Addr, 0, 0, cfg.Seed)
			if err != nil {
				return err
			}
			defer link.Close()
			replica, err := s.kind.Replicate(sctx, master, link.Addr())
			if err != nil {
				return err
			}
			defer replica.Stop()
			link.Cut()

			a, err := dial(ctx, s.Driver, cfg, s.on([]string{master.Addr}), 0)
			if err != nil {
				return err
			}
			defer closeAll(t, a)
			la, aGot, err := first(ctx, t, a, name)
			if err != nil {
				return err
			}

			failed := time.Now()
			if err := master.Kill(); err != nil {
				return err
			}
			if err := s.kind.Promote(ctx, replica.Addr); err != nil {
				return err
			}
			t.update(func() { fig.Promoted++ })
			b, err := dial(ctx, s.Driver, cfg, s.on([]string{replica.Addr}), 1)
			if err != nil {
				return err
			}
			defer closeAll(t, b)
			contend(ctx, spec, fig, t, name, a, b, la, aGot, failed, win)
			return nil
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

func failoverMaster(ctx context.Context, spec engine.CellSpec, s subject, fig *result.FailoverFigures, t *tally) error {
	cfg := spec.Config
	win := window(masters, cfg)
	sctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	f, err := sandbox.Start(sctx, sandbox.Spec{s.need.Kind: s.need.Count})
	if err != nil {
		return err
	}
	defer f.Close()
	servers := s.on(f.Addrs(s.need.Kind))
	for r := range spec.Repeat {
		err := func() error {
			name := lockName("failover", r)
			a, b, err := dialPair(ctx, s.Driver, cfg, servers)
			if err != nil {
				return err
			}
			defer closeAll(t, a, b)
			la, aGot, err := first(ctx, t, a, name)
			if err != nil {
				return err
			}
			lost := f.Servers[s.need.Kind][r%len(f.Servers[s.need.Kind])]
			failed := time.Now()
			if err := lost.Kill(); err != nil {
				return err
			}
			t.update(func() { fig.MastersKilled++ })
			contend(ctx, spec, fig, t, name, a, b, la, aGot, failed, win)
			rctx, cancel := context.WithTimeout(ctx, setupTimeout)
			defer cancel()
			return lost.Restart(rctx)
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

// members returns the run's ensemble when it has at least three members,
// else starts one of three (fleet non-nil: the caller closes it).
func members(ctx context.Context, spec engine.CellSpec, s subject, own bool) ([]string, *sandbox.Fleet, error) {
	if addrs := s.targets(spec.Config.Servers); !own && len(addrs) >= 3 {
		return addrs, nil, nil
	}
	sctx, cancel := context.WithTimeout(ctx, 2*setupTimeout)
	defer cancel()
	f, err := sandbox.Start(sctx, sandbox.Spec{s.need.Kind: 3})
	if err != nil {
		return nil, nil, err
	}
	return f.Addrs(s.need.Kind), f, nil
}

func failoverMember(ctx context.Context, spec engine.CellSpec, s subject, fig *result.FailoverFigures, t *tally) error {
	cfg := spec.Config
	win := window(ensemble, cfg)
	addrs, f, err := members(ctx, spec, s, true)
	if err != nil {
		return err
	}
	defer f.Close()
	for r := range spec.Repeat {
		err := func() error {
			name := lockName("failover", r)
			follower, err := followerOf(ctx, s.kind, addrs)
			if err != nil {
				return err
			}
			ps, err := newProxies(addrs, 0, 0, cfg.Seed)
			if err != nil {
				return err
			}
			defer ps.Close()
			// A may only reach the follower while it connects; then every
			// member, so that its session can move.
			for i, p := range ps {
				if i != follower {
					p.Cut()
				}
			}
			a, err := dial(ctx, s.Driver, cfg, s.on(ps.Addrs()), 0)
			if err != nil {
				return err
			}
			defer closeAll(t, a)
			for _, p := range ps {
				p.Heal()
			}
			b, err := dial(ctx, s.Driver, cfg, s.on(addrs), 1)
			if err != nil {
				return err
			}
			defer closeAll(t, b)
			if err := prepare(ctx, a, name); err != nil {
				return err
			}
			la, aGot, err := first(ctx, t, a, name)
			if err != nil {
				return err
			}
			lostBefore := a.Counters().SessionLost.Load()

			failed := time.Now()
			if err := f.Servers[s.need.Kind][follower].Kill(); err != nil {
				return err
			}
			moved := watchMove(ctx, ps, follower, win)
			contend(ctx, spec, fig, t, name, a, b, la, aGot, failed, win)
			at, ok := <-moved
			lost := a.Counters().SessionLost.Load() - lostBefore
			t.update(func() {
				if ok {
					// The mean so far, moved on by this repeat's move.
					fig.SessionMoved++
					fig.SessionMoveMsMean += (ms(at.Sub(failed)) - fig.SessionMoveMsMean) / float64(fig.SessionMoved)
				}
				fig.SessionLost += lost
			})
			rctx, cancel := context.WithTimeout(ctx, 2*setupTimeout)
			defer cancel()
			return f.Servers[s.need.Kind][follower].Restart(rctx)
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

// watchMove reports when a connection appears on a proxy other than from,
// within max; the channel is closed without a value if none does.
func watchMove(ctx context.Context, ps proxies, from int, max time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	go func() {
		defer close(ch)
		deadline := time.Now().Add(max)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			for i, p := range ps {
				if i != from && p.Active() > 0 {
					ch <- time.Now()
					return
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return ch
}

// followerOf returns the index of a member that its kind says is a
// follower.
func followerOf(ctx context.Context, k sandbox.Kind, addrs []string) (int, error) {
	var errs []error
	for i, a := range addrs {
		mode, err := k.Mode(ctx, a)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if mode == "follower" {
			return i, nil
		}
	}
	return 0, fmt.Errorf("faults: no %s follower among %v: %w", k.Name, addrs, errors.Join(errs...))
}

// challenge has client b ask for the lock from the fault on (until bctx
// ends), note how long that took after since, hold it for hold as client 1
// in h, and release it. The returned channel closes when b is done.
func challenge(ctx, bctx context.Context, t *tally, h *holds, b impl.Locker, name string, retry, hold time.Duration, since time.Time) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		lb, got, err := acquire(bctx, t, b, name, retry)
		if err != nil {
			return
		}
		t.recovered(got.Sub(since))
		kb := h.enter(1, got)
		sleep(bctx, hold)
		h.exit(kb, time.Now())
		release(ctx, t, lb)
	}()
	return done
}
