package engine

import (
	"context"
	"runtime"
	"time"
)

// Waiting for an arrival's intended time: Go's timers are only as fine as
// the netpoller's millisecond wait, so a client sleeps on its timer until
// timerMargin before the arrival, then in the OS (preciseSleep, a
// nanosleep on Linux) until spinWindow before it, and yields in a loop for
// the rest. The loop costs CPU only for the last spinWindow of each
// arrival; the timer keeps a client that waits long from holding a thread.
const (
	timerMargin = 2 * time.Millisecond
	spinWindow  = 50 * time.Microsecond
)

// waitUntil returns at due, or false as soon as ctx is done.
func (w *worker) waitUntil(ctx context.Context, due time.Time) bool {
	if d := time.Until(due) - timerMargin; d > 0 {
		w.timer.Reset(d)
		select {
		case <-w.timer.C:
		case <-ctx.Done():
			w.timer.Stop()
			return false
		}
	}
	if d := time.Until(due) - spinWindow; d > 0 {
		preciseSleep(d)
	}
	for time.Now().Before(due) {
		runtime.Gosched()
	}
	return ctx.Err() == nil
}
