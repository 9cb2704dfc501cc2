package impltest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// CutProxy forwards loopback connections to a server until it is cut,
// for measuring how a lock whose lease is its connection recovers when
// the holder dies: Reset is a crashed process (the kernel resets its
// sockets, so the server sees the connection end at once), Silence a
// host gone from the network (nothing more arrives and nothing is closed:
// the server learns it only from TCP keepalive or its own timeouts).
type CutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	pairs  [][2]*net.TCPConn
	silent bool
	// refuse: Cut, until Heal: new connections are closed at once.
	refuse bool
}

// NewCutProxy listens on a free loopback port in front of target; the
// test's cleanup closes it.
func NewCutProxy(t testing.TB, target string) *CutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &CutProxy{ln: ln, target: target}
	go p.accept()
	t.Cleanup(func() { ln.Close(); p.Reset() })
	return p
}

// Addr is where clients connect instead of the server.
func (p *CutProxy) Addr() string { return p.ln.Addr().String() }

func (p *CutProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.refuse
		p.mu.Unlock()
		if refuse {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		pair := [2]*net.TCPConn{c.(*net.TCPConn), s.(*net.TCPConn)}
		p.mu.Lock()
		p.pairs = append(p.pairs, pair)
		p.mu.Unlock()
		go p.pipe(pair[0], pair[1])
		go p.pipe(pair[1], pair[0])
	}
}

// pipe copies until a side ends or the proxy falls silent; then it keeps
// reading and drops what arrives, leaving both sockets open.
func (p *CutProxy) pipe(from, to *net.TCPConn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		p.mu.Lock()
		silent := p.silent
		p.mu.Unlock()
		if n > 0 && !silent {
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err == io.EOF && !silent {
				to.CloseWrite()
			}
			return
		}
	}
}

// Reset closes every forwarded connection with a TCP reset on both sides.
func (p *CutProxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pair := range p.pairs {
		for _, c := range pair {
			c.SetLinger(0)
			c.Close()
		}
	}
	p.pairs = nil
}

// Silence stops forwarding: both sides stay connected and hear nothing.
func (p *CutProxy) Silence() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.silent = true
}

// Cut partitions the clients off: every forwarded connection is reset and
// new ones are closed at once, until Heal.
func (p *CutProxy) Cut() {
	p.mu.Lock()
	p.refuse = true
	p.mu.Unlock()
	p.Reset()
}

// Heal ends a Cut or a Silence: new connections are forwarded again.
func (p *CutProxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse, p.silent = false, false
}
