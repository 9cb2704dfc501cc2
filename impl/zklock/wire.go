package zklock

import (
	"encoding/binary"
	"net"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/impl"
)

// armedState is what one session's traffic says of zk.Lock's wait, which
// the library keeps to itself: armed once the server answered a
// watch-setting getData (the predecessor watch) without error, and until
// the client sends another request or the server a notification. The
// server sets the watch before it answers, so armed means the watch is in
// place on the server.
//
// The traffic is also where the library's requests are counted: each in
// ZKOps and RoundTrips, each watch set (a turn of waiting) in Retries, and
// the names each getChildren returned in ChildrenRead, as zk-pred counts
// its own.
type armedState struct {
	pending  atomic.Int32 // xid of the watch-setting getData in flight; -1 none
	children atomic.Int32 // xid of the getChildren in flight; -1 none
	armed    atomic.Bool
	counters *impl.Counters
}

func newArmedState(c *impl.Counters) *armedState {
	s := &armedState{counters: c}
	s.pending.Store(-1)
	s.children.Store(-1)
	return s
}

// ZooKeeper's wire protocol, as far as the wait needs it: every packet is
// a 4-byte big-endian length and a body; requests start xid, opcode;
// replies xid, zxid, err. The first packet each way on a connection is the
// session handshake, without either header. Negative xids are the
// client's housekeeping (pings, auth, setWatches) and, from the server,
// notifications (-1).
const (
	opGetData      = 4
	opGetChildren  = 8
	opGetChildren2 = 12
	xidWatchNote   = -1
)

// sniffer is a net.Conn that reads the headers of the packets going by.
type sniffer struct {
	net.Conn
	s       *armedState
	out, in frames
}

// dialer dials like go-zookeeper does, each connection wrapped in a
// sniffer reporting to s.
func dialer(s *armedState) func(network, address string, timeout time.Duration) (net.Conn, error) {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, address, timeout)
		if err != nil {
			return nil, err
		}
		return &sniffer{Conn: c, s: s}, nil
	}
}

func (c *sniffer) Write(p []byte) (int, error) {
	c.out.feed(p, c.request)
	return c.Conn.Write(p)
}

func (c *sniffer) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.in.feed(p[:n], c.reply)
	return n, err
}

// request: anything the client asks disarms; a getData with its watch flag
// set is the wait being armed, once answered.
func (c *sniffer) request(b []byte) {
	if len(b) < 8 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(b))
	if xid < 0 {
		return
	}
	c.s.armed.Store(false)
	c.s.counters.ZKOps.Add(1)
	c.s.counters.RoundTrips.Add(1)
	op := int32(binary.BigEndian.Uint32(b[4:]))
	if op == opGetChildren || op == opGetChildren2 {
		c.s.children.Store(xid)
	}
	if op == opGetData && len(b) >= 12 {
		plen := int(int32(binary.BigEndian.Uint32(b[8:])))
		if plen >= 0 && len(b) >= 12+plen+1 && b[12+plen] != 0 {
			c.s.counters.Retries.Add(1)
			c.s.pending.Store(xid)
			return
		}
	}
	c.s.pending.Store(-1)
}

// reply: the watch-setting getData answered without error arms; a
// notification disarms, before the library hands it to the waiter. A
// getChildren answered without error starts with the count of names it
// returns.
func (c *sniffer) reply(b []byte) {
	if len(b) < 16 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(b))
	if xid >= 0 && xid == c.s.children.Load() {
		c.s.children.Store(-1)
		if len(b) >= 20 && binary.BigEndian.Uint32(b[12:]) == 0 {
			if n := int32(binary.BigEndian.Uint32(b[16:])); n > 0 {
				c.s.counters.ChildrenRead.Add(int64(n))
			}
		}
	}
	switch {
	case xid == xidWatchNote:
		c.s.armed.Store(false)
	case xid >= 0 && xid == c.s.pending.Load():
		c.s.pending.Store(-1)
		c.s.armed.Store(binary.BigEndian.Uint32(b[12:]) == 0)
	}
}

// frames cuts a byte stream into packets; the first is the handshake and
// is skipped.
type frames struct {
	buf        []byte
	handshaken bool
}

// feed appends p and calls each with the body of every complete packet.
func (f *frames) feed(p []byte, each func(body []byte)) {
	f.buf = append(f.buf, p...)
	for len(f.buf) >= 4 {
		n := int(binary.BigEndian.Uint32(f.buf))
		if len(f.buf) < 4+n {
			return
		}
		if f.handshaken {
			each(f.buf[4 : 4+n])
		}
		f.handshaken = true
		f.buf = f.buf[:copy(f.buf, f.buf[4+n:])]
	}
}
