package redlock_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/impl/redlock"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/sandboxtest"
)

// masters starts the Redlock masters for the test (or takes them from
// LOCKBENCH_REDLOCK).
func masters(t *testing.T) impl.Servers {
	t.Helper()
	return sandboxtest.Start(t, redlock.Masters)
}

// fleet starts the masters as a fleet of the test's own, for tests that
// stop and restart them; the test's cleanup stops them all.
func fleet(t *testing.T) *sandbox.Fleet {
	t.Helper()
	return sandboxtest.StartFleet(t, sandbox.Spec{serverkind.Redis: redlock.Masters.Count})
}

// fleetServers are the fleet's servers in Redlock's role.
func fleetServers(f *sandbox.Fleet) impl.Servers {
	return impl.Servers{redlock.Masters.Role: f.Addrs(serverkind.Redis)}
}

// config is a client configuration in the test's namespace; mode "" is
// the default mode.
func config(t *testing.T, servers impl.Servers, mode string) impl.Config {
	cfg := impl.Config{
		Servers:   servers,
		Namespace: t.Name(),
		Seed:      1,
	}
	if mode != "" {
		cfg.Options = map[string]string{redlock.OptMode: mode}
	}
	return cfg
}

func TestConformance(t *testing.T) {
	d, ok := impl.Lookup("redlock")
	if !ok {
		t.Fatal("driver redlock not registered")
	}
	impltest.Run(t, d, sandboxtest.Start(t, d.Needs...), impltest.Options{
		// Every request to a master is bounded by --redlock-timeout (50ms
		// by default), and on a starved test machine (-race, a loaded CI
		// runner) replies take longer: an attempt then finds too few
		// masters answering and the Acquire fails with impl.ErrNoQuorum,
		// or a Release misses a master, whose key stays for the TTL for
		// the leftover checks to count. An Acquire that ends with its ctx
		// no longer depends on the bound (its cleanup has one of its
		// own), but these do. Half the TTL keeps the bound from biting
		// without touching what is checked.
		Configure: func(cfg *impl.Config) {
			cfg.Options = map[string]string{redlock.OptTimeout: (cfg.TTL / 2).String()}
		},
	})
}

func hot(t *testing.T) lockbench.Scenario {
	s, ok := lockbench.LookupScenario("hot")
	if !ok {
		t.Fatal("no scenario hot")
	}
	return s
}

// clients numbers the Lockers tests make, so that each draws its own tokens:
// two clients with one token could delete each other's keys.
var clients atomic.Int64

func newLocker(t *testing.T, cfg impl.Config) *redlock.Locker {
	t.Helper()
	cfg.Client = int(clients.Add(1))
	l, err := redlock.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.(*redlock.Locker)
}

// stopMasters stops the masters of f at idx. The fleet is the test's own:
// whatever is still stopped at its end is simply not restarted.
func stopMasters(t *testing.T, f *sandbox.Fleet, idx ...int) {
	t.Helper()
	for _, i := range idx {
		if err := f.Servers[serverkind.Redis][i].Stop(); err != nil {
			t.Error(err)
		}
	}
}

func restartMasters(t *testing.T, f *sandbox.Fleet, idx ...int) {
	t.Helper()
	for _, i := range idx {
		if s := f.Servers[serverkind.Redis][i]; !s.Running() {
			if err := s.Restart(context.Background()); err != nil {
				t.Error(err)
			}
		}
	}
}

// stopAtStart returns an OnClock func that stops the masters at idx as
// the clients start, every one connected and none yet acquiring, so that
// no acquisition of the cell, warm-up or measured, sees them up. They
// cannot be stopped earlier: New refuses to connect to a dead master. (On
// the first progress line instead, a starved machine stopped them after
// the warm-up had ended and let a measured grant through.)
func stopAtStart(t *testing.T, f *sandbox.Fleet, idx ...int) func(bool) {
	return func(running bool) {
		if running {
			stopMasters(t, f, idx...)
		}
	}
}

func checkSafe(t *testing.T, c result.Cell) {
	t.Helper()
	if c.SafetyViolations != 0 {
		t.Errorf("%d safety violations: %+v", c.SafetyViolations, c.Violations)
	}
}

func TestAcquires(t *testing.T) {
	servers := masters(t)
	for _, mode := range []string{redlock.ModeParallel, redlock.ModeSequential} {
		t.Run(mode, func(t *testing.T) {
			c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
				Impl: "redlock", Scenario: hot(t), Clients: 4, Duration: 500 * time.Millisecond,
				ServerKinds: sandbox.Meter{},
				Config:      config(t, servers, mode),
			})
			if err != nil {
				t.Fatal(err)
			}
			checkSafe(t, c)
			if c.Acquires == 0 || c.Errors != 0 || c.Lost != 0 {
				t.Errorf("acquires %d, errors %v, lost %d", c.Acquires, c.ErrorsByClass, c.Lost)
			}
			// All masters up and the TTL far off: every failed attempt
			// lacked a majority, none ran out of validity.
			if c.ValidityExpired != 0 || c.NoQuorum != c.Retries {
				t.Errorf("retries %d, no quorum %d, validity expired %d", c.Retries, c.NoQuorum, c.ValidityExpired)
			}
		})
	}
}

func TestStatsOnGrant(t *testing.T) {
	cfg := config(t, masters(t), "")
	l := newLocker(t, cfg)
	ctx := context.Background()
	for range 3 {
		lease, err := l.Acquire(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := lease.Fence(); ok {
			t.Error("redlock has no fencing token")
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s := l.RedlockStats()
	if len(s.MastersGranted) != 6 || s.MastersGranted[5].Load() != 3 {
		t.Errorf("masters granted %v, want 3 attempts with all 5", s.MastersGranted)
	}
	ttl := impl.DefaultTTL.Microseconds()
	if v := s.ValidityLeft; v.TotalCount() != 3 || v.Max() >= ttl || v.Min() < ttl*9/10 {
		t.Errorf("validity left: %d values in [%d, %d] µs", v.TotalCount(), v.Min(), v.Max())
	}
}

func TestCancelLeavesNothing(t *testing.T) {
	cfg := config(t, masters(t), "")
	a, b := newLocker(t, cfg), newLocker(t, cfg)
	ctx := context.Background()
	held, err := a.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := b.Acquire(cctx, "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("blocked acquire: %v, want deadline exceeded", err)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// Nothing of b's is left: a fresh client gets every master.
	c := newLocker(t, cfg)
	if _, err := c.Acquire(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if n := c.RedlockStats().MastersGranted[5].Load(); n != 1 {
		t.Errorf("after cancel, first attempt was not granted by all 5 masters: %v", c.RedlockStats().MastersGranted)
	}
}

func TestTwoMastersDown(t *testing.T) {
	f := fleet(t)
	// With 3 of 5 masters every survivor must answer for a majority, so
	// one reply slower than the 50ms default bound (a starved -race run)
	// is a no_quorum that has nothing to do with the masters being down:
	// a bound of 1s keeps what is checked. Stopped masters refuse at once.
	cfg := config(t, fleetServers(f), "")
	cfg.Options = map[string]string{redlock.OptTimeout: "1s"}
	c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
		Impl: "redlock", Scenario: hot(t), Clients: 4,
		Warmup: 500 * time.Millisecond, Duration: 700 * time.Millisecond,
		OnClock:     stopAtStart(t, f, 3, 4),
		ServerKinds: sandbox.Meter{},
		Config:      cfg,
	})
	if err != nil {
		t.Fatal(err)
	}
	if ms := f.Servers[serverkind.Redis]; ms[3].Running() || ms[4].Running() {
		t.Fatal("masters 3 and 4 were not stopped")
	}
	checkSafe(t, c)
	if c.Acquires == 0 || c.ErrorsByClass[impl.ClassNoQuorum] != 0 {
		t.Errorf("with 3 of 5 masters: acquires %d, errors %v", c.Acquires, c.ErrorsByClass)
	}
}

func TestThreeMastersDownFailsFast(t *testing.T) {
	f := fleet(t)
	cfg := config(t, fleetServers(f), "")
	direct := newLocker(t, cfg) // connected while every master is up
	stopped := []int{0, 2, 4}
	c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
		Impl: "redlock", Scenario: hot(t), Clients: 4,
		Warmup: 500 * time.Millisecond, Duration: 500 * time.Millisecond,
		OnClock:     stopAtStart(t, f, stopped...),
		ServerKinds: sandbox.Meter{},
		Config:      cfg,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkSafe(t, c)
	if c.Acquires != 0 || c.ErrorsByClass[impl.ClassNoQuorum] == 0 {
		t.Errorf("with 2 of 5 masters: acquires %d, errors %v", c.Acquires, c.ErrorsByClass)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Fail fast: no quorum is the answer, not the context's deadline.
	_, err = direct.Acquire(ctx, "y")
	if ctx.Err() != nil {
		t.Fatalf("acquire waited for the caller's deadline instead of failing fast: %v", err)
	}
	if !errors.Is(err, impl.ErrNoQuorum) || impl.Class(err) != impl.ClassNoQuorum {
		t.Fatalf("acquire: %v (class %s), want no quorum", err, impl.Class(err))
	}
	var ne *impl.NodeError
	if !errors.As(err, &ne) || !slices.ContainsFunc(stopped, func(i int) bool { return f.Servers[serverkind.Redis][i].Addr == ne.Addr }) {
		t.Errorf("no *impl.NodeError naming a stopped master in %v", err)
	}

	// The same client recovers once the masters are back.
	restartMasters(t, f, stopped...)
	deadline := time.Now().Add(5 * time.Second)
	for {
		lease, err := direct.Acquire(ctx, "y")
		if err == nil {
			if err := lease.Release(ctx); err != nil {
				t.Error(err)
			}
			break
		}
		if !errors.Is(err, impl.ErrNoQuorum) || time.Now().After(deadline) {
			t.Fatalf("after restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestMastersStopMidRun(t *testing.T) {
	f := fleet(t)
	var seen atomic.Int64
	type outcome struct {
		c   result.Cell
		err error
	}
	done := make(chan outcome, 1)
	// Three survivors must all answer within the bound (see
	// TestTwoMastersDown): 1s, not the 50ms default a starved run misses.
	cfg := config(t, fleetServers(f), "")
	cfg.Options = map[string]string{redlock.OptTimeout: "1s"}
	go func() {
		c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
			Impl: "redlock", Scenario: hot(t), Clients: 4, Duration: 2 * time.Second,
			Progress:      func(p lockbench.Progress) { seen.Store(p.Acquires) },
			ProgressEvery: 20 * time.Millisecond,
			ServerKinds:   sandbox.Meter{},
			Config:        cfg,
		})
		done <- outcome{c, err}
	}()
	// Conditions, not sleeps: the masters stop once the cell has been
	// granted the lock, and the test then waits for grants after the stop
	// (the masters are gone when Stop returns).
	const some = 20
	if !waitFor(func() bool { return seen.Load() >= some }, done) {
		t.Fatal("the cell ended before it was granted the lock 20 times")
	}
	stopMasters(t, f, 1, 3)
	before := seen.Load()
	after := waitFor(func() bool { return seen.Load() >= before+some }, done)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	checkSafe(t, r.c)
	if !after || r.c.Acquires < before+some {
		t.Errorf("acquires %d by the stop, %d at the end: want %d more with three masters of five", before, r.c.Acquires, some)
	}
	if r.c.ErrorsByClass[impl.ClassNoQuorum] != 0 {
		t.Errorf("errors %v with a majority up", r.c.ErrorsByClass)
	}
}

// waitFor polls cond until it holds (true) or done is ready (false), and
// leaves done's value for the caller.
func waitFor[T any](cond func() bool, done chan T) bool {
	for !cond() {
		select {
		case v := <-done:
			done <- v
			return cond()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return true
}

func TestConnectToleratesADeadMinority(t *testing.T) {
	live := masters(t)[redlock.Masters.Role]
	var dead []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead = append(dead, ln.Addr().String())
		ln.Close()
	}
	cfg := config(t, nil, "")
	cfg.DialTimeout = time.Second

	// One of three dead: still a majority, so the client works.
	cfg.Servers = impl.Servers{redlock.Masters.Role: {live[0], dead[0], live[1]}}
	l, err := redlock.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("connect with one of three dead: %v", err)
	}
	lease, err := l.Acquire(context.Background(), "minority")
	if err != nil {
		t.Fatalf("acquire with one of three dead: %v", err)
	}
	if err := lease.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.Close()

	// Two of three dead: no majority; the error names a dead master.
	cfg.Servers = impl.Servers{redlock.Masters.Role: {live[0], dead[0], dead[1]}}
	_, err = redlock.New(context.Background(), cfg)
	var ne *impl.NodeError
	if !errors.Is(err, impl.ErrUnreachable) || !errors.As(err, &ne) || (ne.Addr != dead[0] && ne.Addr != dead[1]) {
		t.Errorf("connect with two of three dead: %v", err)
	}
}

func TestConfigRefused(t *testing.T) {
	addrs := []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:4"}
	for _, tc := range []struct {
		name    string
		masters int
		opts    map[string]string
	}{
		{"one master", 1, nil},
		{"even masters", 4, nil},
		{"bad mode", 3, map[string]string{redlock.OptMode: "random"}},
		{"bad timeout", 3, map[string]string{redlock.OptTimeout: "soon"}},
		{"zero timeout", 3, map[string]string{redlock.OptTimeout: "0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := impl.Config{Servers: impl.Servers{redlock.Masters.Role: addrs[:tc.masters]}, Options: tc.opts}
			if _, err := redlock.New(context.Background(), cfg); err == nil || errors.Is(err, impl.ErrUnreachable) {
				t.Errorf("New: %v, want a configuration error before connecting", err)
			}
		})
	}
}

// The distributions cover the measured acquisitions only, not the warm-up.
func TestDistributionsExcludeWarmup(t *testing.T) {
	hot := hot(t)
	c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
		Impl: "redlock", Scenario: hot, Clients: 2, Locks: 2,
		Warmup: 300 * time.Millisecond, Duration: 300 * time.Millisecond, Config: config(t, masters(t), ""),
	})
	if err != nil {
		t.Fatal(err)
	}
	v := c.Distributions["validity_ms"]
	var granted int64
	for k, n := range c.Vectors["masters_granted"] {
		if k >= 3 {
			granted += n
		}
	}
	if c.Acquires == 0 || v.Count != c.Acquires || granted != c.Acquires {
		t.Errorf("%d measured acquisitions, %d validities, %d majority grants", c.Acquires, v.Count, granted)
	}
}

// keysLeft counts, on every master, the keys of lock name in the test's
// namespace.
func keysLeft(t *testing.T, addrs []string, name string) int {
	t.Helper()
	n := 0
	for _, addr := range addrs {
		cl := goredis.NewClient(&goredis.Options{Addr: addr})
		k, err := cl.Exists(context.Background(), redis.Key(t.Name(), name)).Result()
		cl.Close()
		if err != nil {
			t.Fatal(err)
		}
		n += int(k)
	}
	return n
}

// An Acquire whose deadline passes mid-round, with every master's request
// timing out on it while ctx.Err() is still nil, returns ctx.Err(): not
// impl.ErrNoQuorum, and with no no-quorum, retry or attempt counted.
func TestDeadlineMidRoundReturnsCtxErr(t *testing.T) {
	servers := masters(t)
	for _, mode := range []string{redlock.ModeParallel, redlock.ModeSequential} {
		t.Run(mode, func(t *testing.T) {
			cfg := config(t, servers, mode)
			a, b := newLocker(t, cfg), newLocker(t, cfg)
			ctx := context.Background()
			held, err := a.Acquire(ctx, "d")
			if err != nil {
				t.Fatal(err)
			}
			wait := impltest.Stall(t, servers[redlock.Masters.Role], impltest.StallFor)
			// 20ms: below the per-master bound (50ms), so that the masters'
			// requests time out on ctx's deadline.
			dctx, cancel := impltest.LaggingDeadline(20*time.Millisecond, 100*time.Millisecond)
			defer cancel()
			_, err = b.Acquire(dctx, "d")
			wait()
			if !errors.Is(err, context.DeadlineExceeded) || impl.Class(err) != impl.ClassTimeout {
				t.Errorf("Acquire whose deadline passed mid-round: %v (class %s), want ctx.Err() (context.DeadlineExceeded)", err, impl.Class(err))
			}
			c := b.Counters()
			if c.NoQuorum.Load() != 0 || c.Retries.Load() != 0 || c.ValidityExpired.Load() != 0 {
				t.Errorf("no quorum %d, retries %d, validity expired %d counted for an Acquire cut short by its deadline",
					c.NoQuorum.Load(), c.Retries.Load(), c.ValidityExpired.Load())
			}
			for k := range b.RedlockStats().MastersGranted {
				if n := b.RedlockStats().MastersGranted[k].Load(); n != 0 {
					t.Errorf("masters granted[%d] = %d for an attempt cut short by its deadline", k, n)
				}
			}
			if err := held.Release(ctx); err != nil {
				t.Errorf("the holder's lock was touched: %v", err)
			}
		})
	}
}

// An Acquire of a free lock whose deadline passes while its SETs wait on
// the masters undoes the round before it returns, even though the masters
// answer only after the per-master bound: no key is left for the TTL.
func TestDeadlineMidRoundUndoesTheRound(t *testing.T) {
	servers := masters(t)
	addrs := servers[redlock.Masters.Role]
	for _, mode := range []string{redlock.ModeParallel, redlock.ModeSequential} {
		t.Run(mode, func(t *testing.T) {
			cfg := config(t, servers, mode)
			cfg.TTL = 30 * time.Second
			l := newLocker(t, cfg)
			wait := impltest.Stall(t, addrs, impltest.StallFor)
			dctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			_, err := l.Acquire(dctx, "g")
			wait()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Acquire whose deadline passed mid-round: %v, want ctx.Err() (context.DeadlineExceeded)", err)
			}
			// Every stalled SET has run by now (wait returned after the
			// scripts), before the undo sent after it.
			if n := keysLeft(t, addrs, "g"); n != 0 {
				t.Errorf("%d masters still hold the abandoned round's key", n)
			}
			if n := l.Counters().NoQuorum.Load(); n != 0 {
				t.Errorf("no quorum = %d for an Acquire cut short by its deadline", n)
			}
		})
	}
}

// A Release whose deadline passes mid-round is not a lost lock: it returns
// an error wrapping ctx.Err(), not impl.ErrLockLost, and counts nothing.
func TestReleasePastDeadlineIsNotLost(t *testing.T) {
	servers := masters(t)
	l := newLocker(t, config(t, servers, ""))
	lease, err := l.Acquire(context.Background(), "r")
	if err != nil {
		t.Fatal(err)
	}
	wait := impltest.Stall(t, servers[redlock.Masters.Role], impltest.StallFor)
	dctx, cancel := impltest.LaggingDeadline(20*time.Millisecond, 100*time.Millisecond)
	defer cancel()
	err = lease.Release(dctx)
	wait()
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, impl.ErrLockLost) {
		t.Errorf("Release whose deadline passed mid-round: %v, want an error wrapping ctx.Err() and not impl.ErrLockLost", err)
	}
	if n := l.Counters().Lost.Load(); n != 0 {
		t.Errorf("lost = %d for a release cut short by its deadline", n)
	}
}

// Renew extends the key on the masters while a majority holds our token.
// When a minority does (the others expired and went to another client),
// the holder cannot show a majority: ErrLockLost, and the other's keys
// keep their TTL.
func TestRenewNeedsAMajority(t *testing.T) {
	ctx := context.Background()
	srv := masters(t)
	cfg := config(t, srv, "")
	cfg.TTL = 10 * time.Second
	a := newLocker(t, cfg)
	lease, err := a.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	key := redis.Key(t.Name(), "r")
	var raws []*goredis.Client
	for _, addr := range srv[redlock.Masters.Role] {
		raw := goredis.NewClient(&goredis.Options{Addr: addr})
		defer raw.Close()
		raws = append(raws, raw)
		raw.PExpire(ctx, key, time.Second)
	}
	if err := lease.(impl.Renewer).Renew(ctx); err != nil {
		t.Fatal(err)
	}
	for i, raw := range raws {
		if ttl := raw.PTTL(ctx, key).Val(); ttl <= time.Second {
			t.Fatalf("master %d: the key lives %v more after renewing; want up to 10s", i, ttl)
		}
	}
	// Three masters' keys expire and another client takes them.
	for _, raw := range raws[:3] {
		raw.Set(ctx, key, "someone-else", time.Minute)
	}
	if err := lease.(impl.Renewer).Renew(ctx); !errors.Is(err, impl.ErrLockLost) {
		t.Fatalf("renewing on a minority: %v, want ErrLockLost", err)
	}
	for i, raw := range raws[:3] {
		if v, ttl := raw.Get(ctx, key).Val(), raw.PTTL(ctx, key).Val(); v != "someone-else" || ttl <= 10*time.Second {
			t.Errorf("master %d: the other holder's key is %q with %v left", i, v, ttl)
		}
	}
}
