package natskv_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/impl/natskv"
	"github.com/lockbench/lockbench/sandboxtest"
)

func TestConformance(t *testing.T) {
	d, ok := impl.Lookup("nats-kv")
	if !ok {
		t.Fatal("driver nats-kv not registered")
	}
	// A NATS KV key's TTL is whole seconds, at least one.
	impltest.Run(t, d, sandboxtest.Start(t, d.Needs...), impltest.Options{ShortTTL: time.Second})
}

// A release wakes every watching waiter once (a delete marker each), the
// next grant's revision is a larger fencing token, and a TTL below a
// second is refused before any server is asked.
func TestReleaseWakesEveryWatcher(t *testing.T) {
	t.Parallel()
	servers := sandboxtest.Start(t, natskv.Need)
	ctx := context.Background()
	connect := func(client int) impl.Locker {
		l, err := natskv.New(ctx, impl.Config{Servers: servers, Namespace: t.Name(), Client: client})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	holder := connect(1)
	held, err := holder.Acquire(ctx, "herd")
	if err != nil {
		t.Fatal(err)
	}
	first, _ := held.Fence()
	const waiters = 4
	ls := make([]impl.Locker, waiters)
	got := make(chan impl.Lease, waiters)
	for i := range ls {
		ls[i] = connect(2 + i)
		go func(l impl.Locker) {
			actx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			lease, err := l.Acquire(actx, "herd")
			if err != nil {
				t.Error(err)
			}
			got <- lease
		}(ls[i])
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		n := 0
		for _, l := range ls {
			if l.(impl.Settler).Settled() {
				n++
			}
		}
		if n == waiters {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d waiters settled", n, waiters)
		}
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	next := <-got
	if tok, ok := next.Fence(); !ok || tok <= first {
		t.Errorf("the next grant's token %d (ok %v) is not above the first's %d", tok, ok, first)
	}
	var woken int64
	for deadline := time.Now().Add(10 * time.Second); woken < waiters && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		woken = 0
		for _, l := range ls {
			woken += l.Counters().ReleaseWakeups.Load()
		}
	}
	if woken != waiters {
		t.Errorf("one release woke %d of %d watchers", woken, waiters)
	}
	next.Release(ctx)
	for range waiters - 1 {
		if lease := <-got; lease != nil {
			lease.Release(ctx)
		}
	}
	if _, err := natskv.New(ctx, impl.Config{Servers: servers, TTL: 500 * time.Millisecond}); err == nil {
		t.Error("a TTL of 500ms was accepted")
	}
}

// The guarded register on NATS KV keeps the rules every server kind's
// must.
func TestGuard(t *testing.T) {
	servers := sandboxtest.Start(t, natskv.Need)
	impltest.Register(t, natskv.Guard, servers[natskv.Need.Role])
}
