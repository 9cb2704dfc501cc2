package redisfair_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl/redisfair"
)

// The acquire script as Redisson 3.32 and 3.45 changed it: a queued waiter
// is told the holder's remaining lease (max(0, PTTL)), not the time until
// the place ahead of it expires, which a watchdog-renewed holder outlives;
// and a waiter queueing behind an entry that has no place is given the
// lock's PTTL rather than a Lua error.
func TestQueuedWaiterIsToldTheHoldersLease(t *testing.T) {
	t.Parallel()
	s := server(t)
	cl := admin(t, s)
	ctx := context.Background()
	ns := namespace(t)
	lock, queue, timeouts := redisfair.Key(ns, "l"), redisfair.QueueKey(ns, "l"), redisfair.TimeoutKey(ns, "l")
	keys := []string{lock, queue, timeouts}
	now := time.Now().UnixMilli()
	run := func(owner string) (int64, error) {
		return cl.Eval(ctx, redisfair.AcquireSrc, keys, 10000, owner, 1000, now).Int64()
	}
	if _, err := run("a"); err == nil || err.Error() != "redis: nil" {
		t.Fatalf("the first owner: %v, want granted", err)
	}
	if _, err := run("c"); err != nil {
		t.Fatal(err)
	}
	if _, err := run("b"); err != nil {
		t.Fatal(err)
	}
	// The holder's watchdog renews its lease past every place in the queue.
	if err := cl.PExpire(ctx, lock, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := run("b")
	if err != nil || got <= 55000 || got > 60000 {
		t.Errorf("a queued waiter was told %d ms (%v), want the holder's remaining lease, about 60000", got, err)
	}
	// An entry without a place at the queue's end (a waiter whose place was
	// removed): the next waiter queues behind it on the lock's PTTL.
	if err := cl.RPush(ctx, queue, "ghost").Err(); err != nil {
		t.Fatal(err)
	}
	got, err = run("d")
	if err != nil || got <= 55000 || got > 60000 {
		t.Errorf("queueing behind an entry without a place: %d ms (%v), want the lock's PTTL", got, err)
	}
}
