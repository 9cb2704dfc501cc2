package pgadvisory

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

// These locks have no TTL: the lease is the holder's session, which ends
// when the server sees its connection end. TestHolderGone measures that
// for a holder whose connection is reset (a crashed process) and for one
// behind a proxy that falls silent, and checks what a server restart
// does to holders. Times are logged, never asserted.
func TestHolderGone(t *testing.T) {
	f := sandboxtest.StartFleet(t, sandbox.Spec{serverkind.Postgres: 1})
	srv := f.Servers[serverkind.Postgres][0]
	servers := impl.Servers{Role: {srv.Addr}}
	for _, m := range []struct {
		name string
		mode mode
	}{{"pg-advisory", modeBlock}, {"pg-xact", modeXact}} {
		t.Run(m.name+"/reset", func(t *testing.T) {
			holder, waiter := pair(t, servers, m.mode)
			waited := holdAndQueue(t, holder, waiter)
			cut := time.Now()
			holder.proxy.Reset()
			r := <-waited
			if r.err != nil {
				t.Fatalf("the waiter after the holder's connection was reset: %v", r.err)
			}
			t.Logf("%s: the waiter held the lock %v after the holder's connection was reset", m.name, time.Since(cut))
			r.lease.Release(context.Background())
		})
		t.Run(m.name+"/silence", func(t *testing.T) {
			holder, waiter := pair(t, servers, m.mode)
			// The holder's own keepalive settings, the shortest
			// PostgreSQL takes: they cannot help here, because the
			// proxy's kernel, the server's TCP peer, answers every
			// probe — as a NAT or a load balancer in between would.
			for _, q := range []string{"SET tcp_keepalives_idle = 1", "SET tcp_keepalives_interval = 1", "SET tcp_keepalives_count = 2"} {
				if _, err := holder.conn.Exec(context.Background(), q); err != nil {
					t.Fatal(err)
				}
			}
			waited := holdAndQueue(t, holder, waiter)
			holder.proxy.Silence()
			select {
			case r := <-waited:
				t.Fatalf("the waiter got the lock (%v) while the silent holder's session was still open", r.err)
			case <-time.After(4 * time.Second):
			}
			t.Logf("%s: 4 s after the holder fell silent (keepalive 1 s × 2 set on its session) the waiter still waits: the server sees a live peer", m.name)
		})
	}
	t.Run("restart", func(t *testing.T) {
		l := newClient(t, servers, modeBlock, 0)
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
		err = lease.Release(context.Background())
		if !errors.Is(err, impl.ErrLockLost) {
			t.Fatalf("Release after the server restarted: %v, want ErrLockLost", err)
		}
		other := newClient(t, servers, modeBlock, 1)
		ctx, cancel := context.WithTimeout(context.Background(), impltest.Guard)
		defer cancel()
		got, err := other.Acquire(ctx, "gone")
		if err != nil {
			t.Fatalf("a new client after the restart: %v", err)
		}
		got.Release(ctx)
	})
}

type proxied struct {
	*Locker
	proxy *impltest.CutProxy
}

type acquired struct {
	lease impl.Lease
	err   error
}

func newClient(t *testing.T, servers impl.Servers, m mode, client int) *Locker {
	t.Helper()
	l, err := New(context.Background(), impl.Config{Servers: servers, Namespace: t.Name(), Client: client}, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// pair connects a holder through a cut proxy and a waiter directly.
func pair(t *testing.T, servers impl.Servers, m mode) (proxied, *Locker) {
	t.Helper()
	p := impltest.NewCutProxy(t, servers[Role][0])
	holder := newClient(t, impl.Servers{Role: {p.Addr()}}, m, 0)
	return proxied{holder, p}, newClient(t, servers, m, 1)
}

// holdAndQueue has the holder take the lock and the waiter queue behind
// it, seen waiting on the server; the waiter reports on the channel.
func holdAndQueue(t *testing.T, holder proxied, waiter *Locker) <-chan acquired {
	t.Helper()
	if _, err := holder.Acquire(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	out, done := make(chan acquired, 1), make(chan struct{})
	// Runs before the clients' cleanups close them: a Locker is not
	// closed under a running Acquire.
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		lease, err := waiter.Acquire(ctx, "gone")
		out <- acquired{lease, err}
	}()
	waitSettled(t, waiter)
	return out
}
