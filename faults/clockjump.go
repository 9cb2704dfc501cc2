package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/clockshim"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/result"
)

func init() {
	register(fault{name: "clockjump", applies: clockMovable, run: runClockJump,
		options: []impl.Option{ClockJumpOption},
		description: "the wall clock of the lock's servers jumps forward by --clock-jump (0: twice the lease bound), one server after another, " +
			"while a holder holds the lock and a second client asks for it after each jump; on servers of its own, started with lockbench's " +
			"clock shim preloaded (Redis, ZooKeeper's JVM): is the second client granted while the first holds, and what does the holder's late write do"})
}

// OptClockJump is how far a server's wall clock jumps.
const OptClockJump = "clock-jump"

// ClockJumpOption declares OptClockJump.
var ClockJumpOption = impl.DurationOption(OptClockJump, 0, 0, "clockjump: how far each server's wall clock jumps forward (0: twice the lock's lease bound)")

// clockMovable: a lease that ends without its holder, on servers whose
// wall clock lockbench's shim can move — those that read it through the
// C library. A Go server reads the clock without it.
func clockMovable(s subject) error {
	if err := expiring(s); err != nil {
		return err
	}
	switch s.need.Kind {
	case serverkind.Redis, serverkind.ZooKeeper:
		return nil
	case serverkind.Etcd, serverkind.NATS, serverkind.KubeAPIServer:
		return fmt.Errorf("%s's servers (%s) are Go binaries, which read the clock without the C library: lockbench's clock shim cannot move it (Go's timers and lease expiries run on the monotonic clock besides)",
			s.Name, s.need.Kind)
	}
	return fmt.Errorf("%s's servers (%s) cannot be started with lockbench's clock shim", s.Name, s.need.Kind)
}

// runClockJump: Kleppmann's objection to Redlock, staged. On servers of
// its own, started with the clock shim preloaded, a holder acquires the
// lock and reads the guarded register (kept in lockbench's memory, so
// that the clocks move the lock alone); then each server's wall clock in
// turn jumps forward by the jump, and after each a second client asks for
// the lock, all of them within three quarters of the lease bound.
// Granted, it reads the register; the
// holder then writes and releases, and the second client writes and
// releases. The clocks go back before the next repeat.
func runClockJump(ctx context.Context, spec engine.CellSpec, s subject) (result.Cell, error) {
	cfg := spec.Config
	bound := s.bound(cfg)
	jump, err := optDuration(cfg, OptClockJump, 0)
	if err != nil {
		return result.Cell{}, err
	}
	if jump == 0 {
		jump = 2 * bound
	}
	lib, err := clockshim.Build(ctx)
	if err != nil {
		return result.Cell{}, fmt.Errorf("%w: scenario clockjump: %w", engine.ErrNotApplicable, err)
	}
	spec.Guard, spec.GuardFunc = true, impl.MemoryRegister()
	t := newTally(spec)
	fig := &result.ClockJumpFigures{Servers: s.need.Count, JumpMs: ms(jump)}
	t.faults.ClockJump, t.faults.OwnServers = fig, true
	sctx, cancel := context.WithTimeout(sandbox.WithEnv(ctx, clockshim.Env(lib)...), setupTimeout)
	defer cancel()
	f, err := sandbox.Start(sctx, sandbox.Spec{s.need.Kind: max(s.need.Count, 1)})
	if err != nil {
		return result.Cell{}, err
	}
	defer f.Close()
	for r := range spec.Repeat {
		if err := clockJumpOnce(ctx, spec, s, f.Servers[s.need.Kind], jump, bound, r, fig, t); err != nil {
			return t.cell(bound, s.leaseBound()), err
		}
	}
	return t.cell(bound, s.leaseBound()), nil
}

func clockJumpOnce(ctx context.Context, spec engine.CellSpec, s subject, srvs []*sandbox.Server, jump, bound time.Duration, r int, fig *result.ClockJumpFigures, t *tally) error {
	cfg := spec.Config
	name := lockName("clockjump", r)
	var addrs []string
	for _, srv := range srvs {
		addrs = append(addrs, srv.Addr)
	}
	defer func() {
		for _, srv := range srvs {
			clockshim.Set(srv.Dir(), 0)
		}
	}()
	a, b, err := dialPair(ctx, s.Driver, cfg, cfg.Servers.With(s.need.Role, addrs))
	if err != nil {
		return err
	}
	defer closeAll(t, a, b)
	if err := prepare(ctx, a, name); err != nil {
		return err
	}
	h := &holds{lock: name}
	start := time.Now()
	held, err := a.Acquire(ctx, name)
	t.acquiredOp(a, name, start, held, err)
	if err != nil {
		return fmt.Errorf("faults: clockjump: the holder's acquire: %w", err)
	}
	ka := h.enter(0, time.Now())
	t.granted(ctx, a, name, held)
	var second impl.Lease
	kb := -1
	// Every ask ends within three quarters of the holder's lease, so that
	// a grant is the jumps' doing and not the lease running out by the
	// machine's own clock.
	window := bound * 3 / 4 / time.Duration(len(srvs))
	for i, srv := range srvs {
		if err := clockshim.Set(srv.Dir(), jump); err != nil {
			return err
		}
		actx, cancel := context.WithTimeout(ctx, window)
		start := time.Now()
		lb, err := b.Acquire(actx, name)
		cancel()
		t.acquiredOp(b, name, start, lb, err)
		if err == nil {
			second, kb = lb, h.enter(1, time.Now())
			t.granted(ctx, b, name, lb)
			t.update(func() { fig.Granted++; fig.JumpsToGrant = append(fig.JumpsToGrant, int64(i+1)) })
			break
		}
	}
	h.exit(ka, time.Now())
	release(ctx, t, held)
	if second != nil {
		h.exit(kb, time.Now())
		release(ctx, t, second)
	}
	t.violate(h.overlaps(t, time.Now())...)
	return nil
}
