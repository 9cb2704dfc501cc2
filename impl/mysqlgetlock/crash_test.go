package mysqlgetlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/sandboxtest"
)

// GET_LOCK has no TTL: the lock is the holder's connection's, freed when
// the server sees it end. TestHolderGone measures that for a holder whose
// connection is reset (a crashed process) and for one behind a proxy that
// falls silent (MariaDB then waits for wait_timeout, 8 h by default), and
// checks what a server restart does to holders. Times are logged, never
// asserted.
func TestHolderGone(t *testing.T) {
	f := sandboxtest.StartFleet(t, sandbox.Spec{serverkind.MySQL: 1})
	srv := f.Servers[serverkind.MySQL][0]
	servers := impl.Servers{Role: {srv.Addr}}
	t.Run("reset", func(t *testing.T) {
		p := impltest.NewCutProxy(t, srv.Addr)
		holder := newClient(t, impl.Servers{Role: {p.Addr()}}, 0)
		waited := holdAndQueue(t, holder, newClient(t, servers, 1))
		cut := time.Now()
		p.Reset()
		r := <-waited
		if r.err != nil {
			t.Fatalf("the waiter after the holder's connection was reset: %v", r.err)
		}
		t.Logf("the waiter held the lock %v after the holder's connection was reset", time.Since(cut))
		r.lease.Release(context.Background())
	})
	t.Run("silence", func(t *testing.T) {
		p := impltest.NewCutProxy(t, srv.Addr)
		holder := newClient(t, impl.Servers{Role: {p.Addr()}}, 0)
		waited := holdAndQueue(t, holder, newClient(t, servers, 1))
		p.Silence()
		select {
		case r := <-waited:
			t.Fatalf("the waiter got the lock (%v) while the silent holder's connection was still open", r.err)
		case <-time.After(4 * time.Second):
		}
		t.Logf("4 s after the holder fell silent the waiter still waits: the server sees a live peer")
	})
	t.Run("restart", func(t *testing.T) {
		l := newClient(t, servers, 0)
		lease, err := l.Acquire(context.Background(), "gone")
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := srv.Restart(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := lease.Release(context.Background()); !errors.Is(err, impl.ErrLockLost) {
			t.Fatalf("Release after the server restarted: %v, want ErrLockLost", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), impltest.Guard)
		defer cancel()
		got, err := newClient(t, servers, 1).Acquire(ctx, "gone")
		if err != nil {
			t.Fatalf("a new client after the restart: %v", err)
		}
		got.Release(ctx)
	})
}

type acquired struct {
	lease impl.Lease
	err   error
}

func newClient(t *testing.T, servers impl.Servers, client int) *Locker {
	t.Helper()
	l, err := New(context.Background(), impl.Config{Servers: servers, Namespace: t.Name(), Client: client})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// holdAndQueue has the holder take the lock and the waiter queue behind
// it, seen waiting on the server; the waiter reports on the channel.
func holdAndQueue(t *testing.T, holder, waiter *Locker) <-chan acquired {
	t.Helper()
	if _, err := holder.Acquire(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	out, done := make(chan acquired, 1), make(chan struct{})
	// Runs before the clients' cleanups close them.
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		lease, err := waiter.Acquire(ctx, "gone")
		out <- acquired{lease, err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !waiter.Settled() {
		if time.Now().After(deadline) {
			t.Fatal("the waiter was never seen waiting on the server")
		}
		time.Sleep(200 * time.Microsecond)
	}
	return out
}
