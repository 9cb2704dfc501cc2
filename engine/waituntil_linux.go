package engine

import (
	"context"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// alarm is a client's timerfd, read through the netpoller: a wait on it
// holds no thread, and wakes within microseconds of its time where a Go
// timer may be a millisecond late.
type alarm struct {
	fd   int
	f    *os.File
	stop func() bool
}

// newAlarm makes an alarm whose waits end as soon as ctx is done, or nil
// when the OS gives none (the caller waits on its timer instead).
func newAlarm(ctx context.Context) *alarm {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	a := &alarm{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}
	a.stop = context.AfterFunc(ctx, func() { a.f.SetReadDeadline(time.Unix(1, 0)) })
	return a
}

// sleep waits d; false if ctx ended the wait.
func (a *alarm) sleep(d time.Duration) bool {
	its := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(a.fd, 0, &its, nil); err != nil {
		time.Sleep(d)
		return true
	}
	var buf [8]byte
	_, err := a.f.Read(buf[:])
	return err == nil
}

func (a *alarm) close() {
	a.stop()
	a.f.Close()
}
