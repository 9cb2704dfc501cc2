package engine

import (
	"context"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// alarm is a client's timerfd, read through the netpoller: a wait on it
// holds no thread, and wakes within microseconds of its time where a Go
// timer may be a millisecond late.
//
// A wait costs the kernel two syscalls: the timer is armed from inside the
// poller's read, after its readiness was reset, so the wait needs no
// speculative read first (see redis.replyConn for the same reasoning), and
// both are made raw — neither can block — so the scheduler never hands the
// thread's P on for them. An open loop at 10,000 arrivals/s makes as many
// waits.
type alarm struct {
	fd   int
	f    *os.File
	raw  syscall.RawConn
	stop func() bool
	lead time.Duration // how long before its time a wait ends (see wakeBefore)
	spin time.Duration // the most the lead may exceed the median lateness

	late50, late90 time.Duration // estimates of the wakes' lateness

	// One wait's state, kept here so that its step allocates nothing.
	step  func(uintptr) bool // a.arm
	its   unix.ItimerSpec
	armed bool
	err   syscall.Errno
	buf   [8]byte
}

// newAlarm makes an alarm whose waits end as soon as ctx is done, or nil
// when the OS gives none (the caller waits on its timer instead); spin
// is how far past the median lateness it may wake its client (see
// spinAllowance).
func newAlarm(ctx context.Context, spin time.Duration) *alarm {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	a := &alarm{fd: fd, f: os.NewFile(uintptr(fd), "timerfd"), lead: minLead, spin: spin}
	if a.raw, err = a.f.SyscallConn(); err != nil {
		a.f.Close()
		return nil
	}
	a.step = a.arm
	a.stop = context.AfterFunc(ctx, func() { a.f.SetReadDeadline(time.Unix(1, 0)) })
	return a
}

// How early an alarm wakes its client. A wake from the netpoller comes
// late by the OS's wake-up latency: on the 2-core virtual machine this was
// built on, with nothing else running, a timerfd's 80 µs sleep overran by
// 40 µs at the median, 100 µs at p99, 380 µs at p99.9. An alarm learns
// its own lateness — its median and 90th percentile, each followed by a
// frugal streaming estimate (up by step·q when a wake came later than the
// estimate, down by step·(1-q) otherwise) — and wakes ahead by the 90th
// percentile, but by no more than the median plus its spin allowance; the
// client then yields in a loop for the rest. The yielding is what costs:
// it holds a core (one the servers may need) and, while a goroutine
// yields, the scheduler does not poll for the other clients' timers and
// replies. So the allowance is a budget — spinShare of one core for all
// the clients together, spread over the arrival rate: at 1,000/s a wait
// may yield 20 µs past the median, at 10,000/s 2 µs. Measured at 10,000/s
// on 2 cores shared with redis-server, a lead at the 90th percentile
// alone cut the lag's median from 20 to 1 µs but doubled the service
// time's p99 and gave lockbench a tenth of a core more.
const (
	minLead   = 20 * time.Microsecond
	maxLead   = 500 * time.Microsecond
	leadStep  = 10 * time.Microsecond
	spinShare = 0.02
)

// spinAllowance is how long each wait of an open loop at rate arrivals/s
// may yield past the median lateness (see alarm).
func spinAllowance(rate float64) time.Duration {
	if rate <= 0 {
		return 0
	}
	return time.Duration(spinShare / rate * float64(time.Second))
}

// wakeBefore sleeps until a little before due, by the alarm's lead; false
// if ctx ended the wait.
func (a *alarm) wakeBefore(due time.Time) bool {
	at := due.Add(-a.lead)
	d := time.Until(at)
	if d <= 0 {
		// No sleep, so no lateness to learn from: count the wait as
		// punctual, or a lead grown as long as the gaps between a
		// client's arrivals would never shrink again, and the client
		// would yield through every gap.
		a.learn(0)
		return true
	}
	if !a.sleep(d) {
		return false
	}
	a.learn(time.Since(at))
	return true
}

// learn moves the lateness estimates towards a wake's lateness and sets
// the lead from them.
func (a *alarm) learn(late time.Duration) {
	a.late50 = quantileStep(a.late50, late, 0.5)
	a.late90 = quantileStep(a.late90, late, 0.9)
	a.lead = min(max(min(a.late90, a.late50+a.spin), minLead), maxLead)
}

// quantileStep moves est, an estimate of the q-quantile, one step towards
// where x says it lies.
func quantileStep(est, x time.Duration, q float64) time.Duration {
	if x > est {
		est += time.Duration(q * float64(leadStep))
	} else {
		est -= time.Duration((1 - q) * float64(leadStep))
	}
	return min(max(est, 0), maxLead)
}

// sleep waits d; false if ctx ended the wait.
func (a *alarm) sleep(d time.Duration) bool {
	a.its = unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	a.armed, a.err = false, 0
	if err := a.raw.Read(a.step); err != nil {
		return false
	}
	if a.err != 0 { // no timer: wait the ordinary way
		time.Sleep(d)
	}
	return true
}

// arm is sleep's step inside the poller's read: first arm the timer and
// wait, then read its expiry, waiting again while there is none.
func (a *alarm) arm(fd uintptr) bool {
	if !a.armed {
		a.armed = true
		_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&a.its)), 0, 0, 0)
		a.err = e
		return e != 0
	}
	_, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&a.buf[0])), uintptr(len(a.buf)))
	return e != unix.EAGAIN && e != unix.EINTR
}

func (a *alarm) close() {
	a.stop()
	a.f.Close()
}
