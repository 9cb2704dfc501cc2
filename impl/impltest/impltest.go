// Package impltest is the conformance suite of lock drivers: the promises
// of impl.Locker, impl.Lease and impl.Driver checked against the real
// servers, the same way for every driver.
//
// Each driver's own test package calls Run exactly once, with the driver as
// registered, servers for its needs (sandboxtest.Start(t,
// d.Needs...), or impl.Servers{} for a driver without servers) and the
// driver-specific knowledge the suite cannot derive from the declaration
// (Options: known bugs to skip, named, and bounds for a loaded machine).
// What a client left on the servers is counted by the driver's own
// Driver.Residue, the one declaration the harness uses too. A new driver
// gets the suite by adding that one call.
//
// The checks, one subtest each:
//
//   - acquire-release: a grant is made and Release returns nil; another
//     client then gets the lock well within a long TTL, so the release
//     really freed it rather than letting it expire.
//   - mutual-exclusion: several clients, each with its own connection,
//     acquire one lock name in turn; no two are ever inside at once, every
//     Acquire and Release succeeds, and (with Fencing) the tokens seen by
//     successive holders increase.
//   - fencing: with impl.Fencing declared, Fence says ok and its tokens
//     strictly increase over successive grants of one name to different
//     clients; without it, Fence says it has none.
//   - expired-release: with impl.LeaseTTL, a lease left past a short TTL
//     is taken by another client, and the stale holder's Release then
//     wraps impl.ErrLockLost, is counted in Counters.Lost, and leaves the
//     new holder's lock alone; with impl.LeaseSession, the same after the
//     holder is cut off from its servers past its session's bound.
//   - cancelled-acquire: an Acquire waiting behind a holder returns
//     ctx.Err() once its ctx is cancelled, and neither it nor Acquires
//     whose deadlines pass at random points of their wait leave anything
//     queued: with the holder released, the servers hold nothing of the
//     namespace (Driver.Residue, counted on the server while the
//     cancelled clients are still connected and again after Close), and
//     a fresh client gets the lock at once.
//   - deadline-acquire: an Acquire whose ctx deadline passes while it waits
//     returns ctx.Err() (context.DeadlineExceeded) wherever the deadline
//     lands, also in the middle of a request, rather than the client
//     library's own timeout or an error of another class.
//   - abandoned-grant: Acquires of a free lock whose deadlines pass
//     mid-request leave nothing held: a grant the server made but whose
//     reply came too late is undone by the client, not left to its TTL.
//   - close-without-ttl: Close of a client that holds a lock with a long
//     TTL returns without waiting for the TTL.
//   - counters: an uncontended cycle counts round trips (drivers with
//     servers); a contended acquire is seen as woken (Notifications or
//     Wakeups) by drivers that declare a Theory of wake-ups, as retried
//     (Retries) by polling drivers, and as neither by drivers whose
//     waiters queue on the server (impl.ServerQueue).
//
// Every client gets a distinct Config.Client and every subtest a namespace
// of its own, so subtests and repeated runs (-count) never see each
// other's keys or nodes. Every wait is bounded; the only clock assertions
// are hang guards of several seconds.
package impltest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
)

// Options is what the suite needs to know of a driver beyond its
// impl.Driver declaration.
type Options struct {
	// ShortTTL is the TTL of the expired-release check. It must pass the
	// driver's Validate. Default 100ms.
	ShortTTL time.Duration
	// SessionTTL is the session timeout (and TTL) of the expired-release
	// check's holder for a lease that ends with its session. Default 1s.
	SessionTTL time.Duration
	// Configure, if set, adjusts every client's configuration once the
	// suite has made it (driver options, say). It is for bounds the test
	// machine's load could exceed, not for making a check pass.
	Configure func(cfg *impl.Config)
	// Skip names checks (subtests, e.g. "deadline-acquire") not to run,
	// each with the reason t.Skip reports. It is for known driver bugs
	// only, and the reason names the bug, so that the tree stays green
	// and the bug stays in view until it is fixed.
	Skip map[string]string
}

// Durations the suite uses.
const (
	// LongTTL is the TTL (and session timeout) of clients whose grants must
	// not expire while the check runs.
	LongTTL = 30 * time.Second
	// Retry is every client's pause between polls.
	Retry = 5 * time.Millisecond
	// Guard bounds every wait for something that should happen at once: a
	// free lock granted, a cancelled Acquire returning, Close returning.
	// Only a hang reaches it.
	Guard = 10 * time.Second
)

// Run runs the conformance checks on d, as subtests of t, against servers.
func Run(t *testing.T, d impl.Driver, servers impl.Servers, opts Options) {
	t.Helper()
	for _, n := range d.Needs {
		if len(servers[n.Role]) == 0 {
			t.Fatalf("impltest: %s needs servers for role %q; servers has %v", d.Name, n.Role, servers)
		}
	}
	if opts.ShortTTL <= 0 {
		opts.ShortTTL = 100 * time.Millisecond
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = time.Second
	}
	s := &suite{d: d, servers: servers, opts: opts, closed: map[impl.Locker]bool{}}
	checks := []check{
		{"acquire-release", s.acquireRelease},
		{"mutual-exclusion", s.mutualExclusion},
		{"fencing", s.fencing},
		{"expired-release", s.expiredRelease},
		{"cancelled-acquire", s.cancelledAcquire},
		{"deadline-acquire", s.deadlineAcquire},
		{"abandoned-grant", s.abandonedGrant},
		{"close-without-ttl", s.closeWithoutTTL},
		{"counters", s.counters},
	}
	for name := range opts.Skip {
		if !slices.ContainsFunc(checks, func(c check) bool { return c.name == name }) {
			t.Fatalf("impltest: Options.Skip names %q, which is no check", name)
		}
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if why, ok := opts.Skip[c.name]; ok {
				t.Skip(why)
			}
			c.run(t)
		})
	}
}

// check is one subtest of the suite.
type check struct {
	name string
	run  func(*testing.T)
}

type suite struct {
	d       impl.Driver
	servers impl.Servers
	opts    Options
	clients atomic.Int64 // Config.Client of the last client made

	mu     sync.Mutex
	closed map[impl.Locker]bool // closed by a check, not to be closed again
}

// lockName is the lock every check contends on.
const lockName = "l"

// runID and nsSeq keep namespaces apart across runs against the same
// servers (LOCKBENCH_<ROLE> servers outlive a test process) and across
// repetitions within one (-count), where t.Name() repeats.
var (
	runID = strconv.FormatInt(time.Now().UnixNano(), 36)
	nsSeq atomic.Int64
)

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// namespace returns a namespace unique to this run of the subtest t.
// It is derived from t.Name(); characters that a key pattern or a znode
// path would read as syntax become '-'.
func (s *suite) namespace(t *testing.T) string {
	t.Helper()
	ns := fmt.Sprintf("%s-%s-%d", unsafeChars.ReplaceAllString(t.Name(), "-"), runID, nsSeq.Add(1))
	// The driver's Cleanup, if any, runs once every client of the subtest
	// has closed (cleanups run last-registered first).
	t.Cleanup(func() {
		if s.d.Cleanup == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), Guard)
		defer cancel()
		if err := s.d.Cleanup(ctx, s.servers, ns); err != nil {
			t.Errorf("%s Cleanup(%s): %v", s.d.Name, ns, err)
		}
	})
	return ns
}

// config is a client configuration in namespace ns with the given TTL,
// which also serves as the session timeout.
func (s *suite) config(ns string, ttl time.Duration) impl.Config {
	cfg := impl.Config{
		Servers:        s.servers,
		Namespace:      ns,
		TTL:            ttl,
		Retry:          Retry,
		SessionTimeout: ttl,
		Seed:           1,
	}
	if s.opts.Configure != nil {
		s.opts.Configure(&cfg)
	}
	return cfg
}

// client connects one client with cfg and a Client index no other client
// of the suite has; the test's cleanup closes it unless the check did.
func (s *suite) client(t *testing.T, cfg impl.Config) impl.Locker {
	t.Helper()
	cfg.Client = int(s.clients.Add(1))
	if s.d.Validate != nil {
		if err := s.d.Validate(cfg); err != nil {
			t.Fatalf("%s refuses the suite's configuration: %v", s.d.Name, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), Guard)
	defer cancel()
	l, err := s.d.New(ctx, cfg)
	if err != nil {
		t.Fatalf("%s New: %v", s.d.Name, err)
	}
	t.Cleanup(func() {
		s.mu.Lock()
		done := s.closed[l]
		s.mu.Unlock()
		if !done {
			l.Close()
		}
	})
	return l
}

// close closes l as part of a check; the cleanup then leaves it alone.
func (s *suite) close(l impl.Locker) error {
	s.mu.Lock()
	s.closed[l] = true
	s.mu.Unlock()
	return l.Close()
}

// acquire takes name on l within Guard.
func acquire(t *testing.T, l impl.Locker, name string) impl.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Guard)
	defer cancel()
	lease, err := l.Acquire(ctx, name)
	if err != nil {
		t.Fatalf("Acquire(%q): %v", name, err)
	}
	return lease
}

// release gives lease up within Guard and requires success.
func release(t *testing.T, lease impl.Lease) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Guard)
	defer cancel()
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

type acquired struct {
	lease impl.Lease
	err   error
}

// waitBlocked returns once l, whose Acquire is running and will report on
// done, is waiting for the lock: settled (impl.Settler), or, for a Locker
// that cannot say, after a pause. It fails t if the Acquire returns
// instead, or if l never settles within Guard.
func waitBlocked(t *testing.T, l impl.Locker, done <-chan acquired) {
	t.Helper()
	st, ok := l.(impl.Settler)
	if !ok {
		select {
		case r := <-done:
			t.Fatalf("Acquire of a held lock returned (%v, %v) instead of waiting", r.lease, r.err)
		case <-time.After(200 * time.Millisecond):
		}
		return
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	guard := time.After(Guard)
	for !st.Settled() {
		select {
		case r := <-done:
			t.Fatalf("Acquire of a held lock returned (%v, %v) instead of waiting", r.lease, r.err)
		case <-guard:
			t.Fatalf("the waiter did not settle within %v", Guard)
		case <-tick.C:
		}
	}
}

// acquireRelease: a grant, a successful Release, and the lock free again
// for another client well before a TTL could have freed it.
func (s *suite) acquireRelease(t *testing.T) {
	ns := s.namespace(t)
	cfg := s.config(ns, LongTTL)
	a, b := s.client(t, cfg), s.client(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), Guard)
	defer cancel()
	lease, err := a.Acquire(ctx, lockName)
	if err != nil {
		t.Fatalf("Acquire of a free lock: %v", err)
	}
	if lease == nil {
		t.Fatal("Acquire returned a nil lease and no error")
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("Release of a held lease: %v", err)
	}
	// Guard is a third of LongTTL: only a real release lets b in.
	lease, err = b.Acquire(ctx, lockName)
	if err != nil {
		t.Fatalf("another client could not acquire the released lock within %v (TTL %v): %v", Guard, LongTTL, err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("Release by the second client: %v", err)
	}
	// The same client again: a Locker is reusable after a Release.
	release(t, acquire(t, a, lockName))
}

// mutualExclusion: clients × rounds acquisitions of one name, never two
// holders at once.
func (s *suite) mutualExclusion(t *testing.T) {
	const clients, rounds = 4, 25
	ns := s.namespace(t)
	cfg := s.config(ns, impl.DefaultTTL)
	ls := make([]impl.Locker, clients)
	for i := range ls {
		ls[i] = s.client(t, cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var (
		inside, most, grants atomic.Int64
		mu                   sync.Mutex
		tokens               []uint64 // in grant order: appended by the holder
		wg                   sync.WaitGroup
	)
	fencing := s.d.Caps.Has(impl.Fencing)
	errs := make(chan error, clients)
	for _, l := range ls {
		wg.Go(func() {
			for range rounds {
				lease, err := l.Acquire(ctx, lockName)
				if err != nil {
					errs <- fmt.Errorf("Acquire: %w", err)
					return
				}
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				if fencing {
					tok, _ := lease.Fence()
					mu.Lock()
					tokens = append(tokens, tok)
					mu.Unlock()
				}
				grants.Add(1)
				// Stay inside a while, so that an overlap has time to show.
				time.Sleep(200 * time.Microsecond)
				inside.Add(-1)
				if err := lease.Release(ctx); err != nil {
					errs <- fmt.Errorf("Release: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if m := most.Load(); m != 1 {
		t.Errorf("%d clients held %q at once", m, lockName)
	}
	if g := grants.Load(); g != clients*rounds {
		t.Errorf("%d grants, want %d", g, clients*rounds)
	}
	for i := 1; i < len(tokens); i++ {
		if tokens[i] <= tokens[i-1] {
			t.Errorf("grant %d had fencing token %d after %d: tokens must grow with grant order", i, tokens[i], tokens[i-1])
			break
		}
	}
}

// fencing: successive grants of one name to different clients carry
// strictly increasing tokens, including a hand-off to a waiting client.
func (s *suite) fencing(t *testing.T) {
	ns := s.namespace(t)
	cfg := s.config(ns, impl.DefaultTTL)
	ls := []impl.Locker{s.client(t, cfg), s.client(t, cfg), s.client(t, cfg)}
	if !s.d.Caps.Has(impl.Fencing) {
		lease := acquire(t, ls[0], lockName)
		if tok, ok := lease.Fence(); ok {
			t.Errorf("Fence() = %d, true, but %s does not declare impl.Fencing", tok, s.d.Name)
		}
		release(t, lease)
		t.Skipf("%s declares no fencing tokens", s.d.Name)
	}
	var last uint64
	check := func(i int, lease impl.Lease) {
		t.Helper()
		tok, ok := lease.Fence()
		if !ok {
			t.Fatalf("grant %d: Fence says there is no token, but %s declares impl.Fencing", i, s.d.Name)
		}
		if i > 0 && tok <= last {
			t.Fatalf("grant %d: token %d after %d; tokens must strictly increase", i, tok, last)
		}
		last = tok
	}
	// Uncontended grants, client after client.
	for i := range 9 {
		lease := acquire(t, ls[i%len(ls)], lockName)
		check(i, lease)
		release(t, lease)
	}
	// A hand-off: the next grant goes to a client that was waiting.
	held := acquire(t, ls[0], lockName)
	check(9, held)
	done := make(chan acquired, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), Guard)
		defer cancel()
		lease, err := ls[1].Acquire(ctx, lockName)
		done <- acquired{lease, err}
	}()
	waitBlocked(t, ls[1], done)
	release(t, held)
	r := <-done
	if r.err != nil {
		t.Fatalf("the waiter's Acquire after the release: %v", r.err)
	}
	check(10, r.lease)
	release(t, r.lease)
}

// expiredRelease: a lease past its TTL is lost, and its Release says so
// without touching the next holder's lock.
func (s *suite) expiredRelease(t *testing.T) {
	switch {
	case s.d.Caps.Has(impl.LeaseTTL):
	case s.d.Caps.Has(impl.LeaseSession):
		s.sessionLost(t)
		return
	default:
		t.Skipf("%s leases never expire by themselves", s.d.Name)
	}
	ns := s.namespace(t)
	a := s.client(t, s.config(ns, s.opts.ShortTTL))
	b := s.client(t, s.config(ns, LongTTL))
	stale := acquire(t, a, lockName)
	time.Sleep(s.opts.ShortTTL * 5 / 2)
	// The lock expired: b gets it (within Guard, far below b's TTL).
	next := acquire(t, b, lockName)
	lostBefore := a.Counters().Lost.Load()
	ctx, cancel := context.WithTimeout(context.Background(), Guard)
	defer cancel()
	err := stale.Release(ctx)
	if !errors.Is(err, impl.ErrLockLost) || impl.Class(err) != impl.ClassLockLost {
		t.Fatalf("Release of a lease expired %v ago and taken by another client: %v, want an error wrapping impl.ErrLockLost", s.opts.ShortTTL*3/2, err)
	}
	if n := a.Counters().Lost.Load() - lostBefore; n != 1 {
		t.Errorf("Counters().Lost grew by %d for one lost lease, want 1", n)
	}
	if err := next.Release(ctx); err != nil {
		t.Fatalf("the stale Release broke the next holder's lock: its Release says %v", err)
	}
}

// sessionLost is expired-release for a lease that ends with its holder's
// session: the holder, connected through a proxy, is cut off for longer
// than its lease's bound (a short session timeout, or the driver's own
// setting: LeaseBound), another client is granted the lock, the link
// heals, and the stale holder's Release wraps impl.ErrLockLost.
func (s *suite) sessionLost(t *testing.T) {
	if len(s.d.Needs) == 0 {
		t.Skipf("%s has no server to be cut off from", s.d.Name)
	}
	role := s.d.Needs[0].Role
	ns := s.namespace(t)
	short := s.config(ns, s.opts.SessionTTL)
	var addrs []string
	var ps []*CutProxy
	for _, a := range s.servers[role] {
		p := NewCutProxy(t, a)
		ps, addrs = append(ps, p), append(addrs, p.Addr())
	}
	short.Servers = short.Servers.With(role, addrs)
	a := s.client(t, short)
	b := s.client(t, s.config(ns, LongTTL))
	stale := acquire(t, a, lockName)
	bound, what := s.d.LeaseBound(short)
	for _, p := range ps {
		p.Cut()
	}
	ctx, cancel := context.WithTimeout(context.Background(), Guard+3*bound)
	defer cancel()
	next, err := b.Acquire(ctx, lockName)
	if err != nil {
		t.Fatalf("no other client was granted the lock within %v of cutting its holder off (its %s: %v): %v", Guard+3*bound, what, bound, err)
	}
	for _, p := range ps {
		p.Heal()
	}
	// A client that counts its sessions (ZooKeeper's, etcd's) learns of
	// the expiry on reconnecting; its Release before then could only say
	// the server is unreachable. Those that count none are not waited for
	// beyond the bound.
	waitUntil(reconnectBound, func() bool { return a.Counters().SessionLost.Load() > 0 })
	lostBefore := a.Counters().Lost.Load()
	rctx, rcancel := context.WithTimeout(context.Background(), Guard)
	defer rcancel()
	err = stale.Release(rctx)
	if !errors.Is(err, impl.ErrLockLost) || impl.Class(err) != impl.ClassLockLost {
		t.Fatalf("Release of a lease whose session ended and whose lock another client holds: %v, want an error wrapping impl.ErrLockLost", err)
	}
	if n := a.Counters().Lost.Load() - lostBefore; n != 1 {
		t.Errorf("Counters().Lost grew by %d for one lost lease, want 1", n)
	}
	if err := next.Release(rctx); err != nil {
		t.Fatalf("the stale Release broke the next holder's lock: its Release says %v", err)
	}
}

// reconnectBound bounds sessionLost's wait for the stale holder's client
// to reconnect and learn that its session ended.
const reconnectBound = 3 * time.Second

// waitUntil polls cond every millisecond until it holds or max passes.
func waitUntil(max time.Duration, cond func() bool) {
	for deadline := time.Now().Add(max); !cond() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

// cancelledAcquire: a waiter cancelled by its ctx returns ctx.Err() and
// leaves nothing queued on the server, and neither do waiters whose
// deadlines pass at random points of their wait.
func (s *suite) cancelledAcquire(t *testing.T) {
	ns := s.namespace(t)
	cfg := s.config(ns, LongTTL)
	a, b, c := s.client(t, cfg), s.client(t, cfg), s.client(t, cfg)
	fast := cfg
	fast.Retry = time.Microsecond
	d := s.client(t, fast)
	held := acquire(t, a, lockName)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan acquired, 1)
	go func() {
		lease, err := b.Acquire(ctx, lockName)
		done <- acquired{lease, err}
	}()
	waitBlocked(t, b, done)
	cancel()
	select {
	case r := <-done:
		if r.err == nil {
			t.Fatal("a cancelled Acquire of a held lock was granted")
		}
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled Acquire returned %v, want ctx.Err() (context.Canceled)", r.err)
		}
	case <-time.After(Guard):
		t.Fatalf("Acquire still blocked %v after its ctx was cancelled", Guard)
	}
	// Deadlines that land anywhere, mid-request included. What they
	// return is deadline-acquire's to judge; here only what they leave.
	deadlineTries(t, d, 50)

	leftovers := func(when string) {
		t.Helper()
		if s.d.Residue == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), Guard)
		defer cancel()
		n, err := s.d.Residue(ctx, s.servers, ns)
		if err != nil {
			t.Fatalf("counting leftovers %s: %v", when, err)
		}
		if n != 0 {
			t.Errorf("%s, the servers still hold %d entries of namespace %s", when, n, ns)
		}
	}
	// The holder's own entry is there: Residue sees the driver's layout
	// (a count that is always 0 would prove nothing below).
	if s.d.Residue != nil {
		ctx, cancel := context.WithTimeout(context.Background(), Guard)
		n, err := s.d.Residue(ctx, s.servers, ns)
		cancel()
		if err != nil {
			t.Fatalf("counting leftovers while a lock is held: %v", err)
		}
		if n == 0 {
			t.Fatalf("Driver.Residue counts nothing while a client holds a lock of namespace %s: it does not see the driver's keys or nodes", ns)
		}
	}
	release(t, held)

	// The cancelled clients are still connected: what they left would
	// still be there.
	leftovers("after cancelled Acquires and the holder's Release")
	// A fresh client gets the lock at once: nothing of b's or d's queues
	// ahead of it or holds the key (whose TTL, LongTTL, is beyond Guard).
	release(t, acquire(t, c, lockName))
	for _, l := range []impl.Locker{a, b, c, d} {
		if err := s.close(l); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	leftovers("after every client closed")
	if s.d.Residue == nil {
		t.Skipf("the cancelled Acquires returned and left the lock free, but %s declares no Residue: nothing was counted on a server", s.d.Name)
	}
}

// deadlineTries runs n Acquires of the held lock on l, each with a
// deadline of 1–7 ms, and returns those whose error is not ctx.Err().
// None may be granted.
func deadlineTries(t *testing.T, l impl.Locker, n int) (bad []error) {
	t.Helper()
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(1+i%7)*time.Millisecond)
		_, err := l.Acquire(ctx, lockName)
		cancel()
		if err == nil {
			t.Fatalf("try %d: an Acquire of a held lock was granted", i)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			bad = append(bad, err)
		}
	}
	return bad
}

// deadlineAcquire: an Acquire whose ctx deadline passes while it waits
// returns ctx.Err(), context.DeadlineExceeded, wherever the deadline
// lands: also in the middle of a request, where a client library that
// takes the deadline for its socket may report its own timeout first.
func (s *suite) deadlineAcquire(t *testing.T) {
	const tries = 200
	ns := s.namespace(t)
	cfg := s.config(ns, LongTTL)
	a := s.client(t, cfg)
	// Polling as fast as the driver will, so that many deadlines fall
	// inside a request rather than inside a pause.
	cfg.Retry = time.Microsecond
	b := s.client(t, cfg)
	held := acquire(t, a, lockName)
	bad := deadlineTries(t, b, tries)
	release(t, held)
	for i, err := range bad[:min(len(bad), 3)] {
		t.Errorf("example %d: Acquire past its deadline returned %v (class %s), want ctx.Err() (context.DeadlineExceeded)", i+1, err, impl.Class(err))
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d Acquires whose deadline passed returned something other than ctx.Err()", len(bad), tries)
	}
}

// closeWithoutTTL: Close returns without waiting out the TTL of a lock the
// client holds.
func (s *suite) closeWithoutTTL(t *testing.T) {
	ns := s.namespace(t)
	l := s.client(t, s.config(ns, LongTTL))
	acquire(t, l, lockName)
	done := make(chan error, 1)
	go func() { done <- s.close(l) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(Guard):
		t.Fatalf("Close of a client holding a lock (TTL %v) still running after %v", LongTTL, Guard)
	}
}

// counters: round trips for a cycle, and a contended acquire counted as a
// wake-up or as retries, as the driver's declaration says.
func (s *suite) counters(t *testing.T) {
	ns := s.namespace(t)
	cfg := s.config(ns, impl.DefaultTTL)
	a, b := s.client(t, cfg), s.client(t, cfg)

	before := a.Counters().Snapshot()
	release(t, acquire(t, a, lockName))
	after := a.Counters().Snapshot()
	if len(s.d.Needs) > 0 && after.RoundTrips <= before.RoundTrips {
		t.Errorf("an acquire and a release counted %d round trips", after.RoundTrips-before.RoundTrips)
	}
	if after.Lost != before.Lost {
		t.Errorf("an uncontended cycle counted %d lost leases", after.Lost-before.Lost)
	}

	held := acquire(t, a, lockName)
	before = b.Counters().Snapshot()
	done := make(chan acquired, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), Guard)
		defer cancel()
		lease, err := b.Acquire(ctx, lockName)
		done <- acquired{lease, err}
	}()
	waitBlocked(t, b, done)
	release(t, held)
	r := <-done
	if r.err != nil {
		t.Fatalf("the waiter's Acquire after the release: %v", r.err)
	}
	release(t, r.lease)
	after = b.Counters().Snapshot()
	switch {
	case impl.QueuesOnServer(s.d.Theory):
		// The server queues the waiter inside its request: nothing is
		// pushed to it and it never asks twice.
		if d := after.Notifications + after.Wakeups + after.Retries - before.Notifications - before.Wakeups - before.Retries; d != 0 {
			t.Errorf("%s declares waiters queued on the server, but a waiter counted %d notifications, wake-ups or retries", s.d.Name, d)
		}
	case s.d.Theory != nil:
		if after.Notifications == before.Notifications && after.Wakeups == before.Wakeups {
			t.Errorf("%s declares woken waiters (%s), but a waiter that got the lock after a release counted no notification and no wake-up", s.d.Name, s.d.Theory.Waiters)
		}
	case len(s.d.Needs) > 0:
		if after.Retries == before.Retries {
			t.Errorf("%s polls (no Theory), but a waiter that got the lock after a release counted no retries", s.d.Name)
		}
	}
	if len(s.d.Needs) > 0 && after.RoundTrips <= before.RoundTrips {
		t.Errorf("a contended acquire counted no round trips")
	}
}

// abandonedGrant: Acquires of a free lock whose deadlines land anywhere,
// mid-request included, leave nothing held: a grant the server made but
// whose reply came after the deadline is undone by the client, not left
// to expire.
func (s *suite) abandonedGrant(t *testing.T) {
	ns := s.namespace(t)
	cfg := s.config(ns, LongTTL)
	cfg.Retry = time.Microsecond
	l := s.client(t, cfg)
	// Deadlines of 50 µs to 1.5 ms: around one round trip, so that many
	// pass while a request is on the wire.
	granted, abandoned := 0, 0
	for i := range 300 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(1+i%30)*50*time.Microsecond)
		lease, err := l.Acquire(ctx, lockName)
		cancel()
		if err != nil {
			abandoned++
			continue
		}
		granted++
		release(t, lease)
	}
	t.Logf("%d Acquires granted, %d abandoned at their deadline", granted, abandoned)
	if s.d.Residue != nil {
		ctx, cancel := context.WithTimeout(context.Background(), Guard)
		defer cancel()
		n, err := s.d.Residue(ctx, s.servers, ns)
		if err != nil {
			t.Fatalf("counting leftovers: %v", err)
		}
		if n != 0 {
			t.Errorf("after %d Acquires abandoned at their deadline (and %d granted and released), the servers still hold %d entries of namespace %s", abandoned, granted, n, ns)
		}
	}
	// A fresh client gets the lock at once, not after LongTTL.
	c := s.client(t, s.config(ns, LongTTL))
	release(t, acquire(t, c, lockName))
}
