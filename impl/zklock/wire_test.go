package zklock

import (
	"encoding/binary"
	"testing"

	"github.com/lockbench/lockbench/impl"
)

// packet frames body with its length.
func packet(body ...[]byte) []byte {
	var b []byte
	for _, p := range body {
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	return b
}

func request(xid, op int32, path string, watch bool) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(xid))
	b = binary.BigEndian.AppendUint32(b, uint32(op))
	b = binary.BigEndian.AppendUint32(b, uint32(len(path)))
	b = append(b, path...)
	if watch {
		return append(b, 1)
	}
	return append(b, 0)
}

func reply(xid int32, code int32) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(xid))
	b = binary.BigEndian.AppendUint64(b, 7)
	return binary.BigEndian.AppendUint32(b, uint32(code))
}

// feed hands the stream to f in chunks of n bytes, as reads and writes
// may cut it anywhere.
func feed(f *frames, stream []byte, n int, each func([]byte)) {
	for len(stream) > 0 {
		k := min(n, len(stream))
		f.feed(stream[:k], each)
		stream = stream[k:]
	}
}

// The wait is armed only once a watch-setting getData is answered without
// error, and disarmed by the next request or a notification, wherever the
// stream is cut; the handshake and housekeeping do not count.
func TestArmedFollowsTheWatchWhereverTheStreamIsCut(t *testing.T) {
	for _, chunk := range []int{1, 3, 7, 1 << 20} {
		var c impl.Counters
		s := &sniffer{s: newArmedState(&c)}
		out := packet([]byte("handshake"), request(1, 8, "/l", false), request(-2, 11, "", false), request(2, opGetData, "/l/lock-1", true))
		feed(&s.out, out, chunk, s.request)
		if s.s.armed.Load() {
			t.Fatalf("chunk %d: armed before the reply", chunk)
		}
		feed(&s.in, packet([]byte("handshake-reply"), reply(1, 0), reply(2, 0)), chunk, s.reply)
		if !s.s.armed.Load() {
			t.Fatalf("chunk %d: not armed after the watch was set", chunk)
		}
		feed(&s.in, packet(reply(xidWatchNote, 0)), chunk, s.reply)
		if s.s.armed.Load() {
			t.Fatalf("chunk %d: still armed after a notification", chunk)
		}
		// A watch on a node already gone sets nothing.
		feed(&s.out, packet(request(3, opGetData, "/l/lock-0", true)), chunk, s.request)
		feed(&s.in, packet(reply(3, -101)), chunk, s.reply)
		if s.s.armed.Load() {
			t.Fatalf("chunk %d: armed by a getData that failed", chunk)
		}
		if c.ZKOps.Load() != 3 || c.Retries.Load() != 2 {
			t.Errorf("chunk %d: %d requests, %d waits; want 3 and 2 (pings and the handshake excluded)", chunk, c.ZKOps.Load(), c.Retries.Load())
		}
	}
}

// childrenReply is a getChildren2 reply naming names (the stat after them
// is left out: the count is all the sniffer reads).
func childrenReply(xid int32, names ...string) []byte {
	b := reply(xid, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(names)))
	for _, n := range names {
		b = binary.BigEndian.AppendUint32(b, uint32(len(n)))
		b = append(b, n...)
	}
	return b
}

// The names every answered getChildren returned are counted, wherever the
// stream is cut; a failed one, another request's reply and a notification
// count none.
func TestChildrenReadIsCountedFromTheReplies(t *testing.T) {
	for _, chunk := range []int{1, 5, 1 << 20} {
		var c impl.Counters
		s := &sniffer{s: newArmedState(&c)}
		feed(&s.out, packet([]byte("handshake"), request(1, opGetChildren2, "/l", false)), chunk, s.request)
		feed(&s.in, packet([]byte("handshake-reply"), childrenReply(1, "lock-1", "lock-2", "lock-3")), chunk, s.reply)
		feed(&s.out, packet(request(2, opGetData, "/l/lock-2", true)), chunk, s.request)
		feed(&s.in, packet(childrenReply(2, "not", "children")), chunk, s.reply)
		feed(&s.in, packet(childrenReply(xidWatchNote, "x")), chunk, s.reply)
		feed(&s.out, packet(request(3, opGetChildren, "/gone", false)), chunk, s.request)
		feed(&s.in, packet(append(reply(3, -101), 0, 0, 0, 9)), chunk, s.reply)
		feed(&s.out, packet(request(4, opGetChildren2, "/l", false)), chunk, s.request)
		feed(&s.in, packet(childrenReply(4, "lock-3")), chunk, s.reply)
		if got := c.ChildrenRead.Load(); got != 4 {
			t.Errorf("chunk %d: %d children read, want 4 (3 + 1)", chunk, got)
		}
	}
}
