//go:build unix

package redis

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/allocs"
)

// timesOut reads from rc, which gets no reply, and returns when the read
// ended, failing unless it ended with a timeout.
func timesOut(t *testing.T, rc *replyConn, held bool) time.Time {
	t.Helper()
	if held {
		rc.Write([]byte("never answered"))
	}
	_, err := rc.Read(make([]byte, 8))
	end := time.Now()
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with no reply: %v, want a timeout", err)
	}
	return end
}

// Deadlines asked for the way go-redis asks, each a little later than the
// last, or a cell's end and 3 s from now in turn, leave the socket's in
// place, and cost nothing; the socket's moves on once the last reply is
// within keepLead of it.
func TestReplyConnKeepsTheSocketsDeadline(t *testing.T) {
	rc, _ := replyPair(t)
	rc.replied = time.Now()
	end := time.Now().Add(2 * time.Second) // a timed cell's end
	rc.SetReadDeadline(end)
	n := allocs.Total(1000, func() {
		rc.SetReadDeadline(end)
		rc.SetWriteDeadline(end)
		rc.SetReadDeadline(time.Now().Add(3 * time.Second))
		rc.SetWriteDeadline(time.Now().Add(3 * time.Second))
	})
	if !rc.rset.Equal(end) {
		t.Errorf("the socket's read deadline moved from %v to %v, want it kept", end, rc.rset)
	}
	if !rc.wset.IsZero() {
		t.Errorf("the socket's write deadline was set (%v) with no write that could wait", rc.wset)
	}
	if n != 0 {
		t.Errorf("1000 pairs of deadlines allocated %d times, want 0", n)
	}
	rc.replied = end.Add(-keepLead)
	later := time.Now().Add(3 * time.Second)
	rc.SetReadDeadline(later)
	if !rc.rset.Equal(later) {
		t.Errorf("a reply keepLead before the socket's deadline left it at %v, want %v", rc.rset, later)
	}
	rc.SetReadDeadline(time.Time{})
	if !rc.rset.IsZero() {
		t.Errorf("no deadline left the socket's at %v", rc.rset)
	}
}

// A read deadline kept earlier on the socket than the one asked for does
// not end the read early: the read waits until the one asked for, with a
// request held and without.
func TestReplyConnTimesOutWhenAsked(t *testing.T) {
	for _, held := range []bool{true, false} {
		rc, _ := replyPair(t)
		rc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		want := rc.rset.Add(40 * time.Millisecond)
		rc.SetReadDeadline(want)
		if rc.rset.Equal(want) {
			t.Fatal("the socket's deadline moved: the test would not see an early one fire")
		}
		if end := timesOut(t, rc, held); end.Before(want) {
			t.Errorf("held %v: the read timed out %v before its deadline", held, want.Sub(end))
		}
	}
}

// An earlier deadline is set at once.
func TestReplyConnSetsAnEarlierDeadline(t *testing.T) {
	rc, _ := replyPair(t)
	rc.SetReadDeadline(time.Now().Add(3 * time.Second))
	start := time.Now()
	want := start.Add(30 * time.Millisecond)
	rc.SetReadDeadline(want)
	end := timesOut(t, rc, true)
	if end.Before(want) || end.Sub(start) > time.Second {
		t.Errorf("a read with a 30 ms deadline after a 3 s one timed out after %v", end.Sub(start))
	}
}

// A write that can wait (larger than maxHeld, on a socket whose server
// does not read) waits only until the write deadline asked for.
func TestReplyConnWriteDeadline(t *testing.T) {
	rc, srv := replyPairBuf(t, 1)
	stop := time.AfterFunc(10*time.Second, func() { rc.Close() })
	defer stop.Stop()
	want := time.Now().Add(50 * time.Millisecond)
	rc.SetWriteDeadline(want)
	_, err := rc.Write(bytes.Repeat([]byte("w"), 4*maxHeld))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a write the server never reads: %v, want a timeout", err)
	}
	if now := time.Now(); now.Before(want) {
		t.Errorf("the write timed out %v early", want.Sub(now))
	}
	rc.SetWriteDeadline(time.Time{})
	go io.Copy(io.Discard, srv)
	if _, err := rc.Write(bytes.Repeat([]byte("w"), 2*maxHeld)); err != nil {
		t.Errorf("a write with the deadline cleared: %v", err)
	}
}

// A client idle past the socket's deadline, which was kept earlier than
// the one asked for, still gets its reply.
func TestReplyConnReadsPastAKeptDeadline(t *testing.T) {
	rc, srv := replyPair(t)
	go echo(srv)
	rc.replied = time.Now()
	kept := rc.replied.Add(keepLead + 50*time.Millisecond)
	rc.SetReadDeadline(kept)
	rc.SetReadDeadline(time.Now().Add(3 * time.Second))
	if !rc.rset.Equal(kept) {
		t.Fatal("the socket's deadline moved: the test would not see it pass")
	}
	time.Sleep(time.Until(kept) + 10*time.Millisecond)
	rc.Write([]byte("late"))
	if got := readN(t, rc, 12); string(got) != "latelatelate" {
		t.Fatalf("reply %q", got)
	}
}

// BenchmarkDeadlines is what the two deadlines go-redis asks for before
// every command cost, a timed cell's acquisition and release in turn (the
// cell's end, then 3 s from now), on a plain TCP connection and on a
// replyConn (no I/O: the socket's deadlines alone). A cell longer than
// go-redis's 3 s timeout asks for 3 s from now every time.
func BenchmarkDeadlines(b *testing.B) {
	rc, _ := replyPair(b)
	for _, c := range []struct {
		name string
		conn interface {
			SetReadDeadline(time.Time) error
			SetWriteDeadline(time.Time) error
		}
	}{{"conn=tcp", rc.TCPConn}, {"conn=reply", rc}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			end := time.Now().Add(2 * time.Second) // a 3 s cell's, a second in
			for i := range b.N {
				d := end
				if i%2 == 1 {
					d = time.Now().Add(3 * time.Second)
				}
				c.conn.SetWriteDeadline(d)
				c.conn.SetReadDeadline(d)
				rc.replied = time.Now() // as the command's reply would
			}
		})
	}
}
