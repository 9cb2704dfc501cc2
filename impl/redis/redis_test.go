package redis_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/internal/sandboxtest"
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
	impltest.Run(t, d, sandboxtest.Start(t, d.Needs...), impltest.Options{
		Leftovers: impltest.RedisKeys(redis.Need.Role, redis.Key),
		Skip: map[string]string{
			"deadline-acquire": "known bug: redis.(*Locker).Acquire returns go-redis's i/o timeout (class timeout) " +
				"instead of ctx.Err() when ctx's deadline passes during SET NX: the socket deadline is ctx's " +
				"deadline (ContextTimeoutEnabled), and ctx.Err() is still nil when the timeout is read",
			"abandoned-grant": "known bug: redis.(*Locker).Acquire leaves the key held for the whole TTL when ctx's " +
				"deadline passes after SET NX reached the server but before its reply: it returns without " +
				"running the compare-and-delete for the attempt's token",
		},
	})
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
	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := b.Acquire(wctx, "p"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiter returned %v", err)
	}
	// 100 ms at a 10 ms ± 50% retry: several polls, each one counted.
	if r := b.Counters().Retries.Load(); r < 5 {
		t.Errorf("%d retries in 100 ms of polling", r)
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
