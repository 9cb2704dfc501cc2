package impl_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
)

// A queue view answers from a read sent after the asker began waiting,
// never from an older one, and closes what it opened once nobody asks.
func TestQueueViewAnswersFromAFreshRead(t *testing.T) {
	t.Parallel()
	var opened, closed, reads atomic.Int64
	q := impl.NewQueueView(50*time.Millisecond, func(context.Context) (func(context.Context) ([]int, error), func(), error) {
		opened.Add(1)
		list := func(context.Context) ([]int, error) { reads.Add(1); return []int{7}, nil }
		return list, func() { closed.Add(1) }, nil
	})
	from := time.Now().UnixNano()
	if q.Waiting(7, from) {
		t.Fatal("waiting before any read")
	}
	deadline := time.Now().Add(10 * time.Second) // a hang guard, not a speed claim
	for !q.Waiting(7, from) {
		if time.Now().After(deadline) {
			t.Fatal("never seen waiting")
		}
		time.Sleep(time.Millisecond)
	}
	if q.Waiting(8, from) {
		t.Error("a client not in the queue seen waiting")
	}
	if q.Waiting(7, time.Now().Add(time.Hour).UnixNano()) {
		t.Error("answered from a read older than the wait")
	}
	for closed.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the view never closed what it opened")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if opened.Load() == 0 || reads.Load() == 0 {
		t.Errorf("opened %d times, %d reads", opened.Load(), reads.Load())
	}
}
