package mysqlgetlock

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/sandboxtest"
)

// TestBurstQueuesOnServer shows from the server's side what the theory
// says: a burst of 64 clients on one lock, each joining once the one
// before it is seen waiting, stands in the processlist as 63 connections
// in state "User lock", longest wait first in arrival order, before the
// first release; the releases then grant in exactly that order, and no
// waiter counts a notification, a wake-up or a retry.
func TestBurstQueuesOnServer(t *testing.T) {
	const n = 64
	d, _ := impl.Lookup("mysql-getlock")
	servers := sandboxtest.Start(t, d.Needs...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := impl.Config{Servers: servers, Namespace: t.Name()}
	clients := make([]*Locker, n)
	for i := range clients {
		cfg.Client = i
		l, err := New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		clients[i] = l
	}
	first, err := clients[0].Acquire(ctx, "burst")
	if err != nil {
		t.Fatal(err)
	}
	granted := make(chan int, n)
	leases := make([]impl.Lease, n)
	var arrival []int64
	for i := 1; i < n; i++ {
		go func() {
			lease, err := clients[i].Acquire(ctx, "burst")
			if err != nil {
				t.Error(err)
			}
			leases[i] = lease
			granted <- i
		}()
		deadline := time.Now().Add(10 * time.Second)
		for !clients[i].Settled() {
			if time.Now().After(deadline) {
				t.Fatalf("client %d never seen waiting on the server", i)
			}
			time.Sleep(200 * time.Microsecond)
		}
		arrival = append(arrival, clients[i].id)
	}
	if queue := serverQueue(t, clients[0].ctl); !slices.Equal(queue, arrival) {
		t.Fatalf("before the first release the processlist lists %d waiters %v, want the %d in arrival order %v", len(queue), queue, n-1, arrival)
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
}

// serverQueue lists the connections waiting for a user lock, longest
// wait first (information_schema's TIME_MS has microseconds).
func serverQueue(t *testing.T, c *control) []int64 {
	t.Helper()
	rows, err := c.db.QueryContext(context.Background(),
		"SELECT ID FROM information_schema.PROCESSLIST WHERE STATE = 'User lock' ORDER BY TIME_MS DESC")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
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
