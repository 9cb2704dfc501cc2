package faults

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

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
//   - redis: a master with an asynchronous replica. The replica follows
//     through a proxy that is cut before A's grant — replication lag made
//     deterministic — then the master is killed (SIGKILL) and the replica
//     promoted (REPLICAOF NO ONE). B asks the promoted replica, which never
//     heard of A's key: B gets the lock at once, every repeat.
//   - redlock: five masters; one of them is killed right after A's grant.
//     The other four still hold A's key, so B cannot reach a majority
//     until A releases.
//   - zk-*: a three-member ensemble; A is connected to a follower, which is
//     killed. A's session moves to another member within the session
//     timeout and keeps A's node, so B waits until A releases.
//
// The runner starts these servers itself (it must kill them) and restarts
// what it killed between repeats.
func runFailover(ctx context.Context, spec engine.CellSpec, d impl.Driver) (result.Cell, error) {
	fam := familyOf(d)
	t := newTally(spec)
	var err error
	switch fam.class {
	case famRedis:
		err = failoverRedis(ctx, spec, d, t)
	case famRedlock:
		err = failoverRedlock(ctx, spec, d, t)
	case famZK:
		err = failoverZK(ctx, spec, d, t)
	}
	if n := t.details["session_moved"]; n > 0 {
		t.details["session_move_ms_mean"] = t.details["session_move_ms_sum"] / n
	}
	delete(t.details, "session_move_ms_sum")
	bound := fam.bound(spec.Config)
	c := t.cell(bound, "")
	if err != nil {
		return c, err
	}
	f := c.Faults
	s := fmt.Sprintf("%s: %s; a second client got the lock while the first held it in %d of %d repeats",
		c.Impl, failoverWhat[fam.class], int64(f.Details["overlapping_repeats"]), f.Repeats)
	if f.RecoveryMs != nil {
		s += fmt.Sprintf(", %s p50 after the failure (the first held it %s)", fmtMs(f.RecoveryMs.P50), fmtMs(f.Details["hold_window_ms"]))
	}
	c.Verdict = s + "; " + violationsClause(c) + " " + OwnServers
	c.Faults.Details["own_servers"] = 1
	return c, nil
}

var failoverWhat = map[famClass]string{
	famRedis:   "master killed after the grant, asynchronous replica promoted without the key",
	famRedlock: "one of five masters killed after the grant",
	famZK:      "the follower holding the client's session killed",
}

// window is how long A holds after the failure.
func window(class famClass, cfg impl.Config) time.Duration {
	if class == famZK {
		return cfg.SessionTimeout * 3 / 2
	}
	return cfg.TTL / 2
}

// contend runs the second half of a failover repeat: A holds lease until
// the window after the failure ends, then releases; B, already connected,
// asks for the lock from the failure on and holds it spec.Hold. It returns
// whether the two overlapped.
func contend(ctx context.Context, spec engine.CellSpec, t *tally, name string, a, b impl.Locker, la impl.Lease, aGot, failed time.Time, win time.Duration) bool {
	h := &holds{lock: name}
	ka := h.enter(0, aGot)
	bctx, cancel := context.WithTimeout(ctx, win+2*max(spec.Config.TTL, spec.Config.SessionTimeout)+10*time.Second)
	defer cancel()
	done := challenge(ctx, bctx, t, h, b, name, spec.Config.Retry, spec.Hold, failed)
	sleep(ctx, time.Until(failed.Add(win)))
	h.exit(ka, time.Now())
	releaseScripted(ctx, t, la, "holder_release_failed")
	<-done
	vs := h.overlaps(t, time.Now())
	t.violate(vs...)
	t.set("hold_window_ms", ms(win))
	if len(vs) > 0 {
		t.add("overlapping_repeats", 1)
	}
	return len(vs) > 0
}

func failoverRedis(ctx context.Context, spec engine.CellSpec, d impl.Driver, t *tally) error {
	fam := familyOf(d)
	cfg := spec.Config
	win := window(famRedis, cfg)
	for r := range spec.Repeat {
		err := func() error {
			name := lockName("failover", r)
			sctx, cancel := context.WithTimeout(ctx, setupTimeout)
			defer cancel()
			f, err := sandbox.Start(sctx, sandbox.Spec{fam.need.Kind: 1})
			if err != nil {
				return err
			}
			defer f.Close()
			master := f.Servers[fam.need.Kind][0]
			link, err := NewProxy(master.Addr, 0, 0, cfg.Seed)
			if err != nil {
				return err
			}
			defer link.Close()
			replica, err := sandbox.StartReplica(sctx, master, link.Addr())
			if err != nil {
				return err
			}
			defer replica.Stop()
			link.Cut()

			a, err := dial(ctx, d, cfg, impl.Servers{fam.need.Role: {master.Addr}}, 0)
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
			if err := promote(ctx, replica.Addr); err != nil {
				return err
			}
			t.add("promoted", 1)
			b, err := dial(ctx, d, cfg, impl.Servers{fam.need.Role: {replica.Addr}}, 1)
			if err != nil {
				return err
			}
			defer closeAll(t, b)
			contend(ctx, spec, t, name, a, b, la, aGot, failed, win)
			return nil
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

// promote turns a replica into a master, as Sentinel would.
func promote(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cl := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: 2, MaxRetries: -1, DisableIdentity: true})
	defer cl.Close()
	if err := cl.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("faults: promote %s: %w", addr, err)
	}
	return nil
}

func failoverRedlock(ctx context.Context, spec engine.CellSpec, d impl.Driver, t *tally) error {
	fam := familyOf(d)
	cfg := spec.Config
	win := window(famRedlock, cfg)
	sctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	f, err := sandbox.Start(sctx, sandbox.Spec{fam.need.Kind: fam.need.Count})
	if err != nil {
		return err
	}
	defer f.Close()
	servers := impl.Servers{fam.need.Role: f.Addrs(fam.need.Kind)}
	for r := range spec.Repeat {
		err := func() error {
			name := lockName("failover", r)
			a, err := dial(ctx, d, cfg, servers, 0)
			if err != nil {
				return err
			}
			defer closeAll(t, a)
			b, err := dial(ctx, d, cfg, servers, 1)
			if err != nil {
				return err
			}
			defer closeAll(t, b)
			la, aGot, err := first(ctx, t, a, name)
			if err != nil {
				return err
			}
			lost := f.Servers[fam.need.Kind][r%len(f.Servers[fam.need.Kind])]
			failed := time.Now()
			if err := lost.Kill(); err != nil {
				return err
			}
			t.add("masters_killed", 1)
			contend(ctx, spec, t, name, a, b, la, aGot, failed, win)
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

// zkEnsemble returns the run's ZooKeeper servers when they are an ensemble
// of at least three, else starts one (fleet non-nil: the caller closes it).
func zkEnsemble(ctx context.Context, spec engine.CellSpec, fam family, own bool) ([]string, *sandbox.Fleet, error) {
	if addrs := fam.targets(spec.Config.Servers); !own && len(addrs) >= 3 {
		return addrs, nil, nil
	}
	sctx, cancel := context.WithTimeout(ctx, 2*setupTimeout)
	defer cancel()
	f, err := sandbox.Start(sctx, sandbox.Spec{fam.need.Kind: 3})
	if err != nil {
		return nil, nil, err
	}
	return f.Addrs(fam.need.Kind), f, nil
}

func failoverZK(ctx context.Context, spec engine.CellSpec, d impl.Driver, t *tally) error {
	fam := familyOf(d)
	cfg := spec.Config
	win := window(famZK, cfg)
	addrs, f, err := zkEnsemble(ctx, spec, familyOf(d), true)
	if err != nil {
		return err
	}
	defer f.Close()
	for r := range spec.Repeat {
		err := func() error {
			name := lockName("failover", r)
			follower, err := zkFollower(ctx, addrs)
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
			a, err := dial(ctx, d, cfg, impl.Servers{fam.need.Role: ps.Addrs()}, 0)
			if err != nil {
				return err
			}
			defer closeAll(t, a)
			for _, p := range ps {
				p.Heal()
			}
			b, err := dial(ctx, d, cfg, impl.Servers{fam.need.Role: addrs}, 1)
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
			if err := f.Servers[fam.need.Kind][follower].Kill(); err != nil {
				return err
			}
			moved := watchMove(ctx, ps, follower, win)
			contend(ctx, spec, t, name, a, b, la, aGot, failed, win)
			if at, ok := <-moved; ok {
				t.add("session_moved", 1)
				t.add("session_move_ms_sum", ms(at.Sub(failed)))
			}
			t.add("session_lost", float64(a.Counters().SessionLost.Load()-lostBefore))
			rctx, cancel := context.WithTimeout(ctx, 2*setupTimeout)
			defer cancel()
			return f.Servers[fam.need.Kind][follower].Restart(rctx)
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

// zkFollower returns the index of a member that reports Mode: follower.
func zkFollower(ctx context.Context, addrs []string) (int, error) {
	var errs []error
	for i, a := range addrs {
		mode, err := zkMode(ctx, a)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if mode == "follower" {
			return i, nil
		}
	}
	return 0, fmt.Errorf("faults: no ZooKeeper follower among %v: %w", addrs, errors.Join(errs...))
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
