package redisfair_test

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestMeasureDeadWaiter measures what a queued waiter that dies costs the
// one behind it: A holds, B queues and its client dies (connections cut,
// its place left in the queue), C queues behind B, A releases at once. The
// release tells B alone; C gets the lock when B's place expires, the
// fair-wait after A's lease at B's queueing. It prints C's wait and tries,
// and runs only with LOCKBENCH_MEASURE=1; LOCKBENCH_FAIR_WAIT sets the
// fair-wait (default: the row's, 5 min).
func TestMeasureDeadWaiter(t *testing.T) {
	if os.Getenv("LOCKBENCH_MEASURE") != "1" {
		t.Skip("set LOCKBENCH_MEASURE=1 to measure")
	}
	opts := map[string]string{}
	if w := os.Getenv("LOCKBENCH_FAIR_WAIT"); w != "" {
		opts["fair-wait"] = w
	}
	s := server(t)
	ns := namespace(t)
	const lease = 10 * time.Second
	a, b, c := client(t, s, ns, lease, opts), client(t, s, ns, lease, opts), client(t, s, ns, lease, opts)
	ctx := context.Background()
	held, err := a.Acquire(ctx, "l")
	if err != nil {
		t.Fatal(err)
	}
	go b.Acquire(ctx, "l")
	for !b.Settled() {
		time.Sleep(time.Millisecond)
	}
	b.Close() // dies queued: no give-up script runs
	done := make(chan error, 1)
	go func() {
		l, err := c.Acquire(ctx, "l")
		if err == nil {
			err = l.Release(ctx)
		}
		done <- err
	}()
	for !c.Settled() {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("fair-wait %s: the waiter behind the dead one got the lock %v after the release, after %d tries (%d wake-ups)",
		opts["fair-wait"], time.Since(start).Round(time.Millisecond), c.Counters().Retries.Load(), c.Counters().Wakeups.Load())
}
