//go:build unix

package redis

import (
	"errors"
	"os"
	"time"
)

// go-redis sets both deadlines of its connection before every command: the
// command's timeout from now (3 s) or its context's deadline, whichever
// comes first (a timed cell's end, for its acquisitions). On a
// net.TCPConn each set reads the clock, takes the poll descriptor's lock
// and moves a runtime timer: 6 % of lockbench's CPU at 64 uncontended
// clients, for deadlines that, on a server that answers, never fire. A
// replyConn keeps the deadlines asked for and sets the socket's only when
// they matter, and a deadline still fires exactly when it was asked to.
//
// Reads: a deadline no earlier than the socket's leaves the socket's in
// place while that is more than keepLead past the last reply, so that a
// cell's acquisitions and releases, which ask for the cell's end and for
// 3 s from now in turn, leave the cell's end in place, and a client that
// only asks for 3 s from now sets it every 3 s. The socket's is then
// earlier than the one asked for, never later: should it fire, Read sets
// the one asked for and waits on (rearm), which only a server that is
// silent past it, or a client idle past it, sees. An earlier deadline, or
// none, is set at once.
//
// Writes: a request is sent from inside the read that waits for its reply
// (see replyConn) and never waits itself; the write deadline asked for is
// set before a write that can wait (applyWrite), and never otherwise.

// keepLead is how far past the last reply the socket's read deadline must
// be for a later one asked for to leave it in place.
const keepLead = 100 * time.Millisecond

// SetReadDeadline sets the socket's read deadline to t unless the one in
// place is earlier and far enough off (see above).
func (c *replyConn) SetReadDeadline(t time.Time) error {
	c.rwant = t
	if !t.IsZero() && !c.rset.IsZero() && !t.Before(c.rset) && c.replied.Before(c.rkeep) {
		return nil
	}
	return c.setRead(t)
}

// setRead sets the socket's read deadline to t, and rkeep to keepLead
// before it. The test that keeps a deadline compares the last reply with
// rkeep rather than subtracting: go-redis's deadlines carry no monotonic
// reading, so a subtraction from the reply's time took time.Time.Sub's
// slow path, about 150 instructions on each of a cycle's two commands.
func (c *replyConn) setRead(t time.Time) error {
	c.rset, c.rkeep = t, t.Add(-keepLead)
	return c.TCPConn.SetReadDeadline(t)
}

// rearm reports whether err is the socket's read deadline firing before
// the one asked for, having set that one for the caller's next wait.
func (c *replyConn) rearm(err error) bool {
	if !errors.Is(err, os.ErrDeadlineExceeded) || c.rset.IsZero() || !c.rwant.After(c.rset) {
		return false
	}
	return c.setRead(c.rwant) == nil
}

// SetWriteDeadline keeps t for the next write that can wait.
func (c *replyConn) SetWriteDeadline(t time.Time) error {
	c.wwant = t
	return nil
}

// SetDeadline is SetReadDeadline and SetWriteDeadline.
func (c *replyConn) SetDeadline(t time.Time) error {
	c.SetWriteDeadline(t)
	return c.SetReadDeadline(t)
}

// applyWrite sets the socket's write deadline to the one asked for, before
// a write that can wait.
func (c *replyConn) applyWrite() error {
	if c.wwant.Equal(c.wset) {
		return nil
	}
	if err := c.TCPConn.SetWriteDeadline(c.wwant); err != nil {
		return err
	}
	c.wset = c.wwant
	return nil
}
