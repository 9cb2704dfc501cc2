package pgadvisory

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/sandboxtest"
)

// TestBurstQueuesOnServer shows from the server's side what the theory
// says: a burst of 64 clients on one lock, each joining once the one
// before it is seen waiting, stands in pg_locks as 63 ungranted waiters in
// arrival order before the first release; the releases then grant in
// exactly that order, and no waiter counts a notification, a wake-up or
// a retry.
func TestBurstQueuesOnServer(t *testing.T) {
	const n = 64
	servers := sandboxtest.Start(t, need)
	for _, m := range []struct {
		name string
		mode mode
	}{{"pg-advisory", modeBlock}, {"pg-xact", modeXact}} {
		t.Run(m.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cfg := impl.Config{Servers: servers, Namespace: t.Name()}
			clients := make([]*Locker, n)
			for i := range clients {
				cfg.Client = i
				l, err := New(ctx, cfg, m.mode)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Close() })
				clients[i] = l
			}
			watch := sideConn(t, servers)
			first, err := clients[0].Acquire(ctx, "burst")
			if err != nil {
				t.Fatal(err)
			}
			granted := make(chan int, n)
			leases := make([]impl.Lease, n)
			var arrival []uint32
			var waiters sync.WaitGroup
			// Cleanups run last first: on a failure the waiters are
			// stopped before their connections close under them.
			t.Cleanup(func() { cancel(); waiters.Wait() })
			for i := 1; i < n; i++ {
				waiters.Add(1)
				go func() {
					defer waiters.Done()
					lease, err := clients[i].Acquire(ctx, "burst")
					if err != nil {
						t.Error(err)
					}
					leases[i] = lease
					granted <- i
				}()
				waitSettled(t, clients[i])
				arrival = append(arrival, clients[i].pid)
			}
			if queue := serverQueue(t, watch); !slices.Equal(queue, arrival) {
				t.Fatalf("before the first release pg_locks lists %d waiters %v, want the %d in arrival order %v", len(queue), queue, n-1, arrival)
			}
			before := total(clients)
			if err := first.Release(ctx); err != nil {
				t.Fatal(err)
			}
			var order []int
			for range n - 1 {
				i := <-granted
				order = append(order, i)
				if leases[i] != nil {
					if err := leases[i].Release(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			for k, i := range order {
				if i != k+1 {
					t.Fatalf("grant order %v, want arrival order 1…%d", order, n-1)
				}
			}
			after := total(clients)
			if d := after.Notifications + after.Wakeups + after.WastedWakeups + after.Retries - before.Notifications - before.Wakeups - before.WastedWakeups - before.Retries; d != 0 {
				t.Errorf("the burst counted %d notifications, wake-ups or retries; a server queue has none", d)
			}
		})
	}
}

func waitSettled(t *testing.T, l *Locker) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !l.Settled() {
		if time.Now().After(deadline) {
			t.Fatalf("client %d never seen waiting on the server", l.cfg.Client)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// sideConn is the test's own connection, apart from the driver's observer.
func sideConn(t *testing.T, servers impl.Servers) *pgx.Conn {
	t.Helper()
	cc, err := connConfig(servers[Role][0], 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c, err := pgx.ConnectConfig(context.Background(), cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// serverQueue lists the backends waiting on advisory locks in the lock
// queue's own order: a waiter is blocked by the holder and by every
// waiter ahead of it (pg_blocking_pids), so the fewer block it, the
// nearer the head it is. (pg_locks' waitstart is stamped after the waiter
// joined the queue, and on a loaded machine two can be stamped out of
// order.)
func serverQueue(t *testing.T, c *pgx.Conn) []uint32 {
	t.Helper()
	rows, err := c.Query(context.Background(), "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "+
		"ORDER BY cardinality(pg_blocking_pids(pid)), pid")
	if err != nil {
		t.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (uint32, error) {
		var pid int32
		err := r.Scan(&pid)
		return uint32(pid), err
	})
	if err != nil {
		t.Fatal(err)
	}
	return pids
}

func total(ls []*Locker) impl.Counts {
	var c impl.Counts
	for _, l := range ls {
		s := l.Counters().Snapshot()
		c.Notifications += s.Notifications
		c.Wakeups += s.Wakeups
		c.WastedWakeups += s.WastedWakeups
		c.Retries += s.Retries
	}
	return c
}
