package redis_test

import (
	"context"
	"errors"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/internal/allocs"
	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/sandboxtest"
)

// server starts a Redis server for the test and returns its address.
func server(t *testing.T) string {
	t.Helper()
	return sandboxtest.Start(t, redis.Need)[redis.Need.Role][0]
}

func client(t *testing.T, addr string, ttl time.Duration) impl.Locker {
	t.Helper()
	l, err := redis.New(context.Background(), impl.Config{Servers: impl.Servers{redis.Need.Role: {addr}}, Namespace: t.Name(), TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestConformance(t *testing.T) {
	d, ok := impl.Lookup("redis")
	if !ok {
		t.Fatal("driver redis not registered")
	}
	impltest.Run(t, d, sandboxtest.Start(t, d.Needs...), impltest.Options{})
}

// A cycle is two round trips; after SCRIPT FLUSH the release falls back to
// EVAL, one more, and still releases.
func TestReleaseFallsBackToEvalOnNoscript(t *testing.T) {
	ctx := context.Background()
	addr := server(t)
	l := client(t, addr, 10*time.Second)
	c := l.Counters()
	base := c.RoundTrips.Load()
	lease, err := l.Acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.RoundTrips.Load() - base; got != 2 {
		t.Fatalf("a cycle took %d round trips, want 2 (SET, EVALSHA)", got)
	}
	admin := goredis.NewClient(&goredis.Options{Addr: addr})
	defer admin.Close()
	if err := admin.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	base = c.RoundTrips.Load()
	lease, err = l.Acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("release after SCRIPT FLUSH: %v", err)
	}
	if got := c.RoundTrips.Load() - base; got != 3 {
		t.Errorf("a cycle after SCRIPT FLUSH took %d round trips, want 3 (SET, EVALSHA→NOSCRIPT, EVAL)", got)
	}
	if n, _ := admin.Exists(ctx, redis.Key(t.Name(), "a")).Result(); n != 0 {
		t.Error("key left behind")
	}
}

// A lease that expired while held is lost, not silently released — and
// must not delete the next holder's lock.
func TestExpiredLeaseIsLostAndLeavesTheNextHolderAlone(t *testing.T) {
	ctx := context.Background()
	addr := server(t)
	a, b := client(t, addr, 30*time.Millisecond), client(t, addr, 10*time.Second)
	la, err := a.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	lb, err := b.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := la.Release(ctx); !errors.Is(err, impl.ErrLockLost) || impl.Class(err) != impl.ClassLockLost {
		t.Fatalf("release of an expired lease: %v", err)
	}
	if a.Counters().Lost.Load() != 1 {
		t.Errorf("lost = %d", a.Counters().Lost.Load())
	}
	if err := lb.Release(ctx); err != nil {
		t.Fatalf("the stale release deleted the next holder's lock: %v", err)
	}
}

func TestWaiterPollsAndCancelsPromptly(t *testing.T) {
	ctx := context.Background()
	addr := server(t)
	a, b := client(t, addr, 10*time.Second), client(t, addr, 10*time.Second)
	la, err := a.Acquire(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	defer la.Release(ctx)
	// 100 ms at a 10 ms ± 50% retry: several polls, each one counted, and
	// the deadline ends the wait with ctx.Err() wherever it lands, in a
	// pause or mid-request. A starved machine (other tests, -race) may
	// poll only once or twice in 100 ms, which says nothing about the
	// driver: the wait is then repeated, each one again ended by its
	// deadline, until five polls have been counted.
	const waits = 50
	for i := 0; b.Counters().Retries.Load() < 5; i++ {
		if i == waits {
			t.Fatalf("%d retries in %d waits of 100 ms", b.Counters().Retries.Load(), waits)
		}
		wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		_, err := b.Acquire(wctx, "p")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("waiter returned %v", err)
		}
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	_, err = redis.New(context.Background(), impl.Config{Servers: impl.Servers{redis.Need.Role: {dead}}, DialTimeout: time.Second})
	if !errors.Is(err, impl.ErrUnreachable) {
		t.Fatalf("got %v", err)
	}
}

// An Acquire whose deadline passes while SET NX waits for its reply, and
// finds ctx.Err() still nil when the socket reports its timeout, returns
// ctx.Err() all the same, not go-redis's i/o timeout.
func TestDeadlineMidRequestReturnsCtxErr(t *testing.T) {
	ctx := context.Background()
	addr := server(t)
	a, b := client(t, addr, 10*time.Second), client(t, addr, 10*time.Second)
	held, err := a.Acquire(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	wait := impltest.Stall(t, []string{addr}, impltest.StallFor)
	dctx, cancel := impltest.LaggingDeadline(50*time.Millisecond, 100*time.Millisecond)
	defer cancel()
	_, err = b.Acquire(dctx, "d")
	wait()
	if !errors.Is(err, context.DeadlineExceeded) || impl.Class(err) != impl.ClassTimeout {
		t.Errorf("Acquire whose deadline passed mid-request: %v, want ctx.Err() (context.DeadlineExceeded)", err)
	}
	if r := b.Counters().Retries.Load(); r != 0 {
		t.Errorf("%d retries counted for an Acquire cut short by its deadline", r)
	}
	if err := held.Release(ctx); err != nil {
		t.Errorf("the holder's lock was touched: %v", err)
	}
}

// An Acquire of a free lock whose deadline passes after SET NX reached the
// server but before the reply came back undoes the grant before it
// returns: the key is gone at once, not after its TTL. The undo's round
// trip is counted.
func TestDeadlineMidRequestUndoesTheGrant(t *testing.T) {
	ctx := context.Background()
	addr := server(t)
	l := client(t, addr, 30*time.Second)
	admin := goredis.NewClient(&goredis.Options{Addr: addr})
	defer admin.Close()
	base := l.Counters().RoundTrips.Load()
	wait := impltest.Stall(t, []string{addr}, impltest.StallFor)
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err := l.Acquire(dctx, "g")
	wait()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire whose deadline passed mid-request: %v, want ctx.Err() (context.DeadlineExceeded)", err)
	}
	// The stalled SET NX has run by now: wait returned after the script,
	// and the server took the SET, sent earlier, before the undo.
	if n, err := admin.Exists(ctx, redis.Key(t.Name(), "g")).Result(); err != nil || n != 0 {
		t.Errorf("the abandoned grant's key is still held (exists %d, %v)", n, err)
	}
	// SET, then the undo's EVALSHA (and the HELLO of the connection that
	// replaces the one the timeout closed).
	if got := l.Counters().RoundTrips.Load() - base; got < 2 {
		t.Errorf("%d round trips counted, want the SET and the undo", got)
	}
}

// A Release whose deadline passes mid-request returns an error wrapping
// ctx.Err(): neither go-redis's i/o timeout nor a lost lock.
func TestReleasePastDeadlineWrapsCtxErr(t *testing.T) {
	ctx := context.Background()
	addr := server(t)
	l := client(t, addr, 10*time.Second)
	lease, err := l.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	wait := impltest.Stall(t, []string{addr}, impltest.StallFor)
	dctx, cancel := impltest.LaggingDeadline(50*time.Millisecond, 100*time.Millisecond)
	defer cancel()
	err = lease.Release(dctx)
	wait()
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, impl.ErrLockLost) {
		t.Errorf("Release whose deadline passed mid-request: %v, want an error wrapping ctx.Err()", err)
	}
	if n := l.Counters().Lost.Load(); n != 0 {
		t.Errorf("lost = %d for a release cut short by its deadline", n)
	}
}

// Renew extends the key's TTL while it holds our token, and once the
// lease has expired and another client holds the lock it returns
// ErrLockLost and leaves the other's key as it was.
func TestRenewExtendsOnlyOurOwnKey(t *testing.T) {
	ctx := context.Background()
	addr := server(t)
	a := client(t, addr, 300*time.Millisecond)
	lease, err := a.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	raw := goredis.NewClient(&goredis.Options{Addr: addr})
	defer raw.Close()
	key := redis.Key(t.Name(), "r")
	if err := raw.PExpire(ctx, key, 50*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	if err := lease.(impl.Renewer).Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if ttl := raw.PTTL(ctx, key).Val(); ttl <= 50*time.Millisecond {
		t.Fatalf("after renewing, the key lives %v more; want up to the 300ms TTL", ttl)
	}
	if err := raw.Del(ctx, key).Err(); err != nil { // expired, as after a freeze
		t.Fatal(err)
	}
	b := client(t, addr, time.Hour)
	if _, err := b.Acquire(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	before := raw.Get(ctx, key).Val()
	if err := lease.(impl.Renewer).Renew(ctx); !errors.Is(err, impl.ErrLockLost) {
		t.Fatalf("renewing a lease another client took: %v, want ErrLockLost", err)
	}
	if ttl := raw.PTTL(ctx, key).Val(); raw.Get(ctx, key).Val() != before || ttl <= 300*time.Millisecond {
		t.Fatalf("the other holder's key changed: TTL %v", ttl)
	}
}

// A client runs its commands on one dedicated connection (redis.Conn) and
// still gets a new one when it needs to, as a pooled client would: a
// connection the server cut while the client was idle is replaced before
// the next command, without an error; one whose command failed is
// replaced after it, so the next cycle works.
func TestCutOrFailedConnectionIsReplaced(t *testing.T) {
	ctx := context.Background()
	addr := server(t)
	l := client(t, addr, 10*time.Second)
	cycle := func(name string) error {
		lease, err := l.Acquire(ctx, name)
		if err != nil {
			return err
		}
		return lease.Release(ctx)
	}
	if err := cycle("c"); err != nil {
		t.Fatal(err)
	}
	admin := goredis.NewClient(&goredis.Options{Addr: addr})
	defer admin.Close()
	n, err := admin.ClientKillByFilter(ctx, "TYPE", "normal", "SKIPME", "yes").Result()
	if err != nil || n != 1 {
		t.Fatalf("CLIENT KILL: %d killed, %v; want the client's one connection", n, err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := cycle("c"); err != nil {
		t.Fatalf("cycle on a connection cut while idle: %v, want it replaced first", err)
	}

	wait := impltest.Stall(t, []string{addr}, impltest.StallFor)
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = l.Acquire(dctx, "f")
	cancel()
	wait()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire cut short: %v, want ctx.Err()", err)
	}
	for i := range 3 {
		if err := cycle("c"); err != nil {
			t.Fatalf("cycle %d after a failed command: %v", i, err)
		}
	}
	clients, err := admin.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	// The client's connections are those whose last command was its
	// release (admin's ran CLIENT LIST, Stall's an EVAL).
	if got := strings.Count(clients, "cmd=evalsha "); got != 1 {
		t.Errorf("the client has %d connections open, want one:\n%s", got, clients)
	}
}

func TestPollWaitNamesTheRetry(t *testing.T) {
	t.Parallel()
	if w := redis.PollWait(impl.Config{Retry: 3 * time.Millisecond, Jitter: 0.25}); !strings.Contains(w, "3ms ± 25%") {
		t.Errorf("PollWait = %q", w)
	}
	if w := redis.PollWait(impl.Config{}); !strings.Contains(w, "10ms ± 50%") {
		t.Errorf("PollWait of the defaults = %q", w)
	}
}

// The guarded register's scripts keep the rules every server kind's must.
func TestGuard(t *testing.T) {
	servers := sandboxtest.Start(t, redis.Need)
	impltest.Register(t, redis.Guard, servers[redis.Need.Role])
}

// On a Redis Cluster too, where the Redisson rows' cells guard with it.
func TestClusterGuard(t *testing.T) {
	servers := sandboxtest.StartSized(t, map[string]int{serverkind.RedisCluster: 3}, redis.ClusterNeed)
	impltest.Register(t, redis.ClusterNeed.Guard, servers[redis.ClusterNeed.Role])
}

// An uncontended cycle allocates what go-redis needs for its two commands
// and the lease, which holds its token: not a token string and its box
// besides. The Locker's share is counted against the same cycle's commands
// sent on the Conn alone.
func TestCycleAllocatesOnlyItsLease(t *testing.T) {
	addr := server(t)
	ctx := context.Background()
	l := client(t, addr, 30*time.Second)
	cycle := func() {
		s, err := l.Acquire(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := redis.DialConn(ctx, addr, impl.Config{}.WithDefaults(), &impl.Counters{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	key, tok := redis.Key(t.Name()+"-conn", "a"), any("tok")
	keys, args := []string{key}, []any{tok}
	conn := func() {
		if ok, err := cl.SetNX(ctx, key, tok, 30*time.Second).Result(); err != nil || !ok {
			t.Fatal(ok, err)
		}
		if err := redis.ReleaseScript.Run(ctx, cl, keys, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// The process allocates now and then besides (a goroutine an earlier
	// test left, the runtime): a count over runs only grows by it, so each
	// side keeps its least of several rounds, taken in turn.
	const runs, rounds = 200, 5
	lockAllocs, connAllocs := uint64(math.MaxUint64), uint64(math.MaxUint64)
	for range rounds {
		lockAllocs, connAllocs = min(lockAllocs, allocs.Total(runs, cycle)), min(connAllocs, allocs.Total(runs, conn))
	}
	t.Logf("%d cycles: %d allocations through the Locker, %d through the Conn alone (the least of %d rounds)", runs, lockAllocs, connAllocs, rounds)
	if extra := int64(lockAllocs) - int64(connAllocs); extra < runs-runs/50 || extra > runs+runs/50 {
		t.Errorf("%d cycles allocated %d times through the Locker and %d through its Conn alone: want one more a cycle, the lease", runs, lockAllocs, connAllocs)
	}
}
