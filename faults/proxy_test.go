package faults

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// echo starts a TCP echo server on loopback.
func echo(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(t *testing.T, c net.Conn) (time.Duration, error) {
	t.Helper()
	c.SetDeadline(time.Now().Add(300 * time.Millisecond))
	start := time.Now()
	if _, err := c.Write([]byte("ping")); err != nil {
		return 0, err
	}
	buf := make([]byte, 4)
	_, err := io.ReadFull(c, buf)
	return time.Since(start), err
}

func TestProxy(t *testing.T) {
	t.Parallel()
	target := echo(t)
	for _, tc := range []struct {
		name          string
		delay, jitter time.Duration
		min           time.Duration
	}{
		{"plain", 0, 0, 0},
		{"delayed", 10 * time.Millisecond, 2 * time.Millisecond, 16 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewProxy(target, tc.delay, tc.jitter, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			c, err := net.Dial("tcp", p.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			d, err := roundTrip(t, c)
			if err != nil {
				t.Fatal(err)
			}
			if d < tc.min {
				t.Errorf("round trip %v, want ≥ %v (delay each way)", d, tc.min)
			}
			if p.Active() != 1 {
				t.Errorf("active %d, want 1", p.Active())
			}

			// Cut: nothing passes, yet nothing is closed either.
			p.Cut()
			if _, err := roundTrip(t, c); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("after cut: %v, want a timeout (silence, not a reset)", err)
			}
			if p.Active() != 0 {
				t.Errorf("active %d after cut, want 0", p.Active())
			}
			n, err := net.Dial("tcp", p.Addr())
			if err == nil {
				if _, err = roundTrip(t, n); err == nil {
					t.Error("a new connection got through a cut")
				}
				n.Close()
			}

			// Heal: the cut connection is closed, new ones work.
			p.Heal()
			c.SetDeadline(time.Now().Add(time.Second))
			if _, err := c.Read(make([]byte, 1)); err == nil {
				t.Error("cut connection still open after heal")
			}
			n, err = net.Dial("tcp", p.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			if _, err := roundTrip(t, n); err != nil {
				t.Errorf("after heal: %v", err)
			}
		})
	}
}

// TestProxyReset: Reset ends a forwarded connection with RST on both
// sides, as a dead process's kernel answers, and new connections pass.
func TestProxyReset(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	serverSide := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			serverSide <- c
		}
	}()
	p, err := NewProxy(ln.Addr().String(), 0, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var s net.Conn
	select {
	case s = <-serverSide:
	case <-time.After(5 * time.Second):
		t.Fatal("the proxy did not connect to the server")
	}
	defer s.Close()
	// The server side is accepted as the proxy dials it, a moment before
	// the proxy holds the pair: wait for it, or Reset finds nothing.
	for end := time.Now().Add(5 * time.Second); p.Active() == 0 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	p.Reset()
	for side, conn := range map[string]net.Conn{"server": s, "client": c} {
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := conn.Read(make([]byte, 1))
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("%s side after Reset: %v, want a connection reset (not EOF, not a timeout)", side, err)
		}
	}
}
