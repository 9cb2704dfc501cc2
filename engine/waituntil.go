package engine

import (
	"context"
	"runtime"
	"time"
)

// Waiting for an arrival's intended time. Go's timers are only as fine as
// the netpoller's millisecond wait: one set under a millisecond ahead
// fires up to a millisecond late. So a client waits on an alarm of its own
// where the OS gives one (a timerfd on Linux, read through the netpoller:
// it holds no thread and no P while it waits), which wakes it a learnt
// lead before its time (see alarm.wakeBefore), else on its timer until
// timerMargin before; then it yields in a loop for the rest.
const timerMargin = 2 * time.Millisecond

// WaitUntil returns at due, or false as soon as ctx is done.
func (w *Client) WaitUntil(ctx context.Context, due time.Time) bool {
	if w.alarm != nil {
		if !w.alarm.wakeBefore(due) {
			return false
		}
	} else if d := time.Until(due) - timerMargin; d > 0 {
		w.timer.Reset(d)
		select {
		case <-w.timer.C:
		case <-ctx.Done():
			w.timer.Stop()
			return false
		}
	}
	for time.Now().Before(due) {
		runtime.Gosched()
	}
	return ctx.Err() == nil
}
