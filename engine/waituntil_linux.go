package engine

import (
	"syscall"
	"time"
)

// preciseSleep blocks the calling thread for d in the kernel, whose timers
// wake it within tens of microseconds, where a Go timer under a
// millisecond may fire a millisecond late. Go hands the thread's P to
// other goroutines meanwhile.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // EINTR: wake early; the caller spins the rest
}
