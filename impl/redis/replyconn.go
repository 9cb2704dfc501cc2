//go:build unix

package redis

import (
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// replyConn is a TCP connection for strict request–reply traffic that
// sends a request only when its reply is read, so that each command costs
// the kernel one write and one read.
//
// A Go net.Conn reads speculatively: Read first tries the socket, and only
// when that finds it empty (EAGAIN) waits for the poller. Right after a
// request the reply is never there yet, so on a lock client every reply
// cost an extra, empty read: measured with GOMAXPROCS=1 at 4 uncontended
// clients, 3.8 reads per lock cycle of two commands, a quarter of the
// client's syscalls. The speculative read cannot simply be skipped, since
// the poller's readiness is reset when a read begins, and a reply that
// arrived between the request and that reset would never be noticed. So
// replyConn holds a request back (Write) until the read (Read) has begun:
// the request is written from inside the read, after the reset, so its
// reply's arrival always wakes the wait, and then it is read once.
//
// Only for connections that never read while another goroutine writes, nor
// write without reading the reply next: a pub/sub connection does both,
// and would hold a SUBSCRIBE back until its receiver reads.
type replyConn struct {
	*net.TCPConn
	raw syscall.RawConn
	out []byte // requests written and not yet sent

	// Read's state, kept here so that its step allocates nothing.
	step       func(uintptr) bool // c.readStep
	p          []byte
	n, sent    int
	full       bool // the socket took only part: the rest goes by flush
	werr, rerr error

	replied time.Time // when a read last returned data

	// Deadlines (see deadline.go): asked for, and set on the socket.
	rwant, rset time.Time
	rkeep       time.Time // keepLead before rset (setRead)
	wwant, wset time.Time
}

// maxHeld bounds the requests held back; a larger write (a long
// pipeline) is sent at once.
const maxHeld = 16 << 10

// newReplyConn wraps c when it is a TCP connection, else returns it as is.
func newReplyConn(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	rc := &replyConn{TCPConn: tc, raw: raw, out: make([]byte, 0, 512)}
	rc.step = rc.readStep
	return rc
}

// aliveWindow is how recently a connection must have answered for its
// pool's health check to be answered without asking the kernel.
const aliveWindow = 10 * time.Millisecond

// SyscallConn is the raw connection go-redis's pool peeks at before every
// command (a recvfrom with MSG_PEEK, to find a connection the server has
// closed): one syscall in three of a command, 3.5 µs of a 41 µs lock
// cycle at 64 clients. A connection that answered within aliveWindow is
// taken as alive without the peek: no server restarts in that time, and
// one closed some other way fails its next command instead, an error the
// cell counts, as a dead connection mid-command is.
func (c *replyConn) SyscallConn() (syscall.RawConn, error) { return aliveCheck{c}, nil }

// aliveCheck is the RawConn SyscallConn gives: its Read skips the peek
// while the connection's last answer is recent, the rest is the socket's.
type aliveCheck struct{ c *replyConn }

func (a aliveCheck) Control(f func(fd uintptr)) error    { return a.c.raw.Control(f) }
func (a aliveCheck) Write(f func(fd uintptr) bool) error { return a.c.raw.Write(f) }

func (a aliveCheck) Read(f func(fd uintptr) bool) error {
	if len(a.c.out) == 0 && time.Since(a.c.replied) < aliveWindow {
		return nil
	}
	return a.c.raw.Read(f)
}

// Write holds p back until the next Read, unless too much is held.
func (c *replyConn) Write(p []byte) (int, error) {
	if len(c.out)+len(p) > maxHeld {
		if err := c.flush(); err != nil {
			return 0, err
		}
		if err := c.applyWrite(); err != nil {
			return 0, err
		}
		return c.TCPConn.Write(p)
	}
	c.out = append(c.out, p...)
	return len(p), nil
}

// flush sends what is held the ordinary way (the poller waits while the
// socket's buffer is full, under the write deadline).
func (c *replyConn) flush() error {
	if len(c.out) == 0 {
		return nil
	}
	if err := c.applyWrite(); err != nil {
		return err
	}
	_, err := c.TCPConn.Write(c.out)
	c.out = c.out[:0]
	return err
}

// Read sends what is held, then waits for the reply and reads it.
func (c *replyConn) Read(p []byte) (int, error) {
	if len(c.out) == 0 {
		return c.readPlain(p)
	}
	c.p, c.n, c.sent, c.full, c.werr, c.rerr = p, 0, 0, false, nil, nil
	err := c.raw.Read(c.step)
	for c.rearm(err) {
		err = c.raw.Read(c.step) // c.sent says what is sent already
	}
	held, n := c.out[c.sent:], c.n
	c.out, c.p = c.out[:0], nil
	switch {
	case err != nil:
		return 0, err
	case c.werr != nil:
		return 0, c.opError("write", c.werr)
	case c.full:
		if err := c.applyWrite(); err != nil {
			return 0, err
		}
		if _, err := c.TCPConn.Write(held); err != nil {
			return 0, err
		}
		return c.readPlain(p)
	case c.rerr != nil:
		return 0, c.opError("read", c.rerr)
	case n == 0:
		return 0, io.EOF
	}
	c.replied = time.Now()
	return n, nil
}

// readPlain is a read of the socket with nothing held.
func (c *replyConn) readPlain(p []byte) (int, error) {
	n, err := c.TCPConn.Read(p)
	for n == 0 && c.rearm(err) {
		n, err = c.TCPConn.Read(p)
	}
	if n > 0 {
		c.replied = time.Now()
	}
	return n, err
}

// readStep is Read's step inside the poller's read: first send what is
// held and wait, then read the reply, waiting again while there is none.
// It keeps its state in the conn, so that the read allocates nothing.
func (c *replyConn) readStep(fd uintptr) bool {
	for c.sent < len(c.out) {
		m, err := rawIO(syscall.SYS_WRITE, fd, c.out[c.sent:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			c.full = true
			return true
		case err != nil:
			c.werr = err
			return true
		}
		c.sent += m
		if c.sent == len(c.out) {
			return false // wait for the reply
		}
	}
	for {
		c.n, c.rerr = rawIO(syscall.SYS_READ, fd, c.p)
		if c.rerr != syscall.EINTR {
			break
		}
	}
	return c.rerr != syscall.EAGAIN
}

func (c *replyConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError(op, err)}
}

// rawIO is a read or write on the non-blocking socket fd, made without
// telling the scheduler: a syscall that cannot block needs no hand-off of
// the thread's P, and the scheduler's watchdog hands the P of a thread
// found in a syscall to another thread. With one P that hand-off — a
// futex wake of another thread and a context switch each way — came with
// one lock cycle in eight, for a write that was only slow because on a
// virtual machine the kernel wakes redis-server inside it.
func rawIO(trap, fd uintptr, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
