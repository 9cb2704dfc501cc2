//go:build unix

package redis

import (
	"bytes"
	"context"
	"errors"
	"github.com/lockbench/lockbench/internal/allocs"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// replyPair is a replyConn and the server end of its TCP connection.
func replyPair(t testing.TB) (*replyConn, *net.TCPConn) {
	return replyPairBuf(t, 0)
}

// replyPairBuf is replyPair with socket buffers of buf bytes (the kernel
// rounds them up to its minimum) set before connecting, so that the TCP
// window is small too; 0 leaves the kernel's defaults.
func replyPairBuf(t testing.TB, buf int) (*replyConn, *net.TCPConn) {
	t.Helper()
	control := func(opt int) func(string, string, syscall.RawConn) error {
		return func(_, _ string, c syscall.RawConn) error {
			if buf > 0 {
				c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, opt, buf) })
			}
			return nil
		}
	}
	lc := net.ListenConfig{Control: control(syscall.SO_RCVBUF)}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	d := net.Dialer{Control: control(syscall.SO_SNDBUF)}
	c, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv := <-accepted
	if srv == nil {
		t.Fatal("accept failed")
	}
	rc, ok := newReplyConn(c).(*replyConn)
	if !ok {
		t.Fatal("a TCP connection was not wrapped")
	}
	t.Cleanup(func() { rc.Close(); srv.Close() })
	return rc, srv.(*net.TCPConn)
}

// echo answers every request the server end reads with the request
// three times, allocating nothing once warm.
func echo(srv net.Conn) {
	buf, out := make([]byte, 64<<10), make([]byte, 0, 192<<10)
	for {
		n, err := srv.Read(buf)
		if err != nil {
			return
		}
		out = append(append(append(out[:0], buf[:n]...), buf[:n]...), buf[:n]...)
		if _, err := srv.Write(out); err != nil {
			return
		}
	}
}

func readN(t *testing.T, c net.Conn, n int) []byte {
	t.Helper()
	got := make([]byte, n)
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	return got
}

// A request is held until the read and sent from it; the reply is read,
// also when it is longer than the caller's buffer, and round trips repeat
// without a byte lost or allocated.
func TestReplyConnRoundTrips(t *testing.T) {
	rc, srv := replyPair(t)
	go echo(srv)
	if n, err := rc.Write([]byte("PING\r\n")); n != 6 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if len(rc.out) != 6 {
		t.Fatalf("Write sent the request at once (%d bytes held), want it held until Read", len(rc.out))
	}
	if got := readN(t, rc, 18); string(got) != "PING\r\nPING\r\nPING\r\n" {
		t.Fatalf("reply %q", got)
	}
	if len(rc.out) != 0 {
		t.Fatalf("%d bytes still held after the reply", len(rc.out))
	}
	// Two writes before one read (a pipeline) go out together.
	rc.Write([]byte("a"))
	rc.Write([]byte("b"))
	if got := readN(t, rc, 6); string(got) != "ababab" {
		t.Fatalf("pipelined reply %q", got)
	}
	req, buf := []byte("x"), make([]byte, 3)
	if n := allocs.Total(200, func() {
		rc.Write(req)
		if _, err := io.ReadFull(rc, buf); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("200 round trips allocated %d times, want 0", n)
	}
}

// A write larger than maxHeld goes out at once, after what was held.
func TestReplyConnSendsLargeWritesAtOnce(t *testing.T) {
	rc, srv := replyPair(t)
	rc.Write([]byte("head"))
	big := bytes.Repeat([]byte("z"), maxHeld)
	if _, err := rc.Write(big); err != nil {
		t.Fatal(err)
	}
	if len(rc.out) != 0 {
		t.Fatalf("%d bytes held after a large write", len(rc.out))
	}
	if got := readN(t, srv, 4+maxHeld); !bytes.Equal(got, append([]byte("head"), big...)) {
		t.Fatal("the server got other bytes than were written")
	}
}

// When the socket takes only part of what is held, the rest is sent the
// ordinary way and the reply still read.
func TestReplyConnFinishesAPartialSend(t *testing.T) {
	rc, srv := replyPairBuf(t, 1) // the kernel's minimums: a few KiB each way
	held := bytes.Repeat([]byte("q"), maxHeld)
	go func() {
		time.Sleep(50 * time.Millisecond) // let the client's send fill both buffers
		got := make([]byte, len(held))
		if _, err := io.ReadFull(srv, got); err != nil || !bytes.Equal(got, held) {
			srv.Close()
			return
		}
		srv.Write([]byte("+OK\r\n"))
	}()
	if _, err := rc.Write(held); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, rc, 5); string(got) != "+OK\r\n" {
		t.Fatalf("reply %q", got)
	}
	if !rc.full {
		t.Error("the socket took all of it at once: the partial path was not exercised")
	}
}

// A read deadline ends the wait for a reply with a timeout, as on a plain
// connection; a closed server ends it with io.EOF.
func TestReplyConnDeadlineAndEOF(t *testing.T) {
	rc, srv := replyPair(t)
	rc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	rc.Write([]byte("never answered"))
	_, err := rc.Read(make([]byte, 8))
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past the deadline: %v, want a timeout", err)
	}
	if got := readN(t, srv, 14); string(got) != "never answered" {
		t.Fatalf("server got %q", got)
	}
	rc.SetReadDeadline(time.Time{})
	rc.Write([]byte("bye"))
	go func() { io.ReadFull(srv, make([]byte, 3)); srv.Close() }()
	if n, err := rc.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("read from a closed server = %d, %v, want io.EOF", n, err)
	}
}

// The pool's health check peeks at the socket only when the connection has
// not answered within aliveWindow, and the peek then finds a connection
// the server has closed.
func TestReplyConnSkipsThePeekWhileAnswering(t *testing.T) {
	rc, srv := replyPair(t)
	go echo(srv)
	rc.Write([]byte("PING\r\n"))
	readN(t, rc, 18)
	raw, err := rc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	peeks := 0
	peek := func(uintptr) bool { peeks++; return true }
	if err := raw.Read(peek); err != nil || peeks != 0 {
		t.Fatalf("right after a reply: peeks %d (err %v), want none", peeks, err)
	}
	time.Sleep(aliveWindow + 5*time.Millisecond)
	if err := raw.Read(peek); err != nil || peeks != 1 {
		t.Fatalf("%v after the last reply: peeks %d (err %v), want 1", aliveWindow+5*time.Millisecond, peeks, err)
	}
	srv.Close()
	time.Sleep(aliveWindow + 5*time.Millisecond)
	eof := false
	raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		eof = n == 0 && err == nil
		return true
	})
	if !eof {
		t.Fatal("the peek did not find the closed connection")
	}
	if n := allocs.Total(100, func() { raw, _ := rc.SyscallConn(); raw.Read(peek) }); n != 0 {
		t.Errorf("100 checks allocated %d times, want 0", n)
	}
}
