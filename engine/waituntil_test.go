package engine

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// A client's alarm wakes it once its time has come, and at once when its
// context ends — an open-loop client must never sleep through the end of
// its cell.
func TestAlarmWakesAtItsTimeAndWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	a := newAlarm(ctx, 0)
	if a == nil && runtime.GOOS == "linux" {
		t.Fatal("newAlarm returned nil on Linux: timerfd_create failed")
	}
	if a == nil {
		t.Skip("no alarm on this OS: clients wait on their timers")
	}
	defer a.close()
	start := time.Now()
	if !a.sleep(2 * time.Millisecond) {
		t.Fatal("a sleep with the context alive reported it ended")
	}
	if time.Since(start) < 2*time.Millisecond {
		t.Fatalf("woke after %v, before its time", time.Since(start))
	}
	done := make(chan bool)
	go func() { done <- a.sleep(time.Hour) }()
	cancel()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("a sleep the context ended reported it ran its course")
		}
	case <-time.After(time.Minute):
		t.Fatal("an hour's sleep went on after its context ended")
	}
}
