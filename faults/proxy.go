package faults

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards TCP from a loopback port to one server, optionally adding
// a delay each way, and can be cut like a network partition.
//
// It is our own rather than Toxiproxy's: the scenarios need exactly three
// things — cut without closing anything, heal, delay ± jitter — set
// synchronously from the scenario's goroutine so that a cut is in force
// before the next command is sent. Toxiproxy as a library brings an HTTP
// API, a metrics stack and its own notion of toxics to get the same, and
// its cuts close connections (a reset the client notices at once, unlike a
// partition).
//
// Each connection costs two goroutines (four with a delay); at most
// maxConns are forwarded at a time and further ones are closed at once.
type Proxy struct {
	ln     net.Listener
	target string
	delay  time.Duration
	jitter time.Duration
	seed   uint64

	mu     sync.Mutex
	cut    bool
	closed bool
	links  map[*link]struct{}
	made   uint64 // connections accepted, for per-connection random streams
	wg     sync.WaitGroup
}

// maxConns bounds the connections one proxy forwards at once.
const maxConns = 512

// dialTimeout bounds the proxy's connect to its server.
const dialTimeout = 2 * time.Second

// chunkQueue bounds the chunks in flight per direction with a delay, so a
// fast sender is held back instead of filling memory.
const chunkQueue = 64

// NewProxy listens on a free loopback port and forwards to target. delay,
// if positive, holds every chunk that long in each direction, ± a uniform
// jitter (never below zero, never reordered); seed makes the jitter
// repeatable.
func NewProxy(target string, delay, jitter time.Duration, seed uint64) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faults: proxy: %w", err)
	}
	p := &Proxy{ln: ln, target: target, delay: delay, jitter: jitter, seed: seed, links: map[*link]struct{}{}}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr is where clients connect instead of the server.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target is the server behind the proxy.
func (p *Proxy) Target() string { return p.target }

// Cut partitions the server off: what is in flight or sent later on the
// existing connections is dropped silently (neither side is closed or
// reset, as when packets are lost), and new connections are closed at
// once. It takes effect before Cut returns.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for l := range p.links {
		l.cut.Store(true)
	}
}

// Reset ends every connection with a TCP reset, on both sides at once, as
// when the client's process dies and its kernel answers the next segment
// with RST: the server learns at once that the connection is gone. New
// connections are still forwarded.
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for l := range p.links {
		l.reset()
	}
}

// Heal ends a cut: the connections that were cut are closed (both sides
// learn now what a partition would have told them later) and new ones are
// forwarded again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	for l := range p.links {
		if l.cut.Load() {
			l.close()
		}
	}
}

// Active is the number of connections being forwarded and not cut.
func (p *Proxy) Active() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for l := range p.links {
		if !l.cut.Load() && !l.dead.Load() {
			n++
		}
	}
	return n
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	err := p.ln.Close()
	for l := range p.links {
		l.close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.cut || p.closed || len(p.links) >= maxConns
		p.made++
		n := p.made
		p.mu.Unlock()
		if refuse {
			c.Close()
			continue
		}
		s, err := net.DialTimeout("tcp", p.target, dialTimeout)
		if err != nil {
			c.Close()
			continue
		}
		l := &link{client: c, server: s}
		p.mu.Lock()
		if p.cut || p.closed {
			p.mu.Unlock()
			l.close()
			continue
		}
		p.links[l] = struct{}{}
		p.wg.Add(2)
		p.mu.Unlock()
		up := rand.New(rand.NewPCG(p.seed, 2*n))
		down := rand.New(rand.NewPCG(p.seed, 2*n+1))
		go p.pipe(l, s, c, up)
		go p.pipe(l, c, s, down)
	}
}

// pipe copies src to dst until either side fails, then closes the link
// and, once both directions have ended, forgets it.
func (p *Proxy) pipe(l *link, dst, src net.Conn, r *rand.Rand) {
	defer p.wg.Done()
	defer func() {
		l.close()
		if l.ended.Add(1) == 2 {
			p.mu.Lock()
			delete(p.links, l)
			p.mu.Unlock()
		}
	}()
	if p.delay <= 0 && p.jitter <= 0 {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 && !l.cut.Load() {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	type chunk struct {
		b   []byte
		due time.Time
	}
	q := make(chan chunk, chunkQueue)
	var writer sync.WaitGroup
	writer.Go(func() {
		t := time.NewTimer(time.Hour)
		defer t.Stop()
		failed := false
		for c := range q {
			if failed {
				continue // drain, so the reader never blocks on a dead writer
			}
			if d := time.Until(c.due); d > 0 {
				t.Reset(d)
				<-t.C
			}
			if l.cut.Load() {
				continue
			}
			if _, err := dst.Write(c.b); err != nil {
				failed = true
				l.close()
			}
		}
	})
	defer writer.Wait()
	defer close(q)
	var last time.Time
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !l.cut.Load() {
			due := time.Now().Add(p.hold(r))
			if due.Before(last) { // TCP is ordered: a chunk never overtakes
				due = last
			}
			last = due
			q <- chunk{b: append([]byte(nil), buf[:n]...), due: due}
		}
		if err != nil {
			return
		}
	}
}

// hold is one chunk's delay: delay ± jitter, at least zero.
func (p *Proxy) hold(r *rand.Rand) time.Duration {
	d := p.delay
	if p.jitter > 0 {
		d += time.Duration((2*r.Float64() - 1) * float64(p.jitter))
	}
	return max(d, 0)
}

// link is one forwarded connection.
type link struct {
	client, server net.Conn
	cut            atomic.Bool
	dead           atomic.Bool
	ended          atomic.Int32
}

// reset closes both sides with SO_LINGER 0, which sends RST instead of FIN.
func (l *link) reset() {
	for _, c := range []net.Conn{l.client, l.server} {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
	}
	l.close()
}

func (l *link) close() {
	if l.dead.Swap(true) {
		return
	}
	l.client.Close()
	l.server.Close()
}

// proxies is a set of proxies, one per server, closed together.
type proxies []*Proxy

// newProxies starts one proxy per target; on error it closes those made.
func newProxies(targets []string, delay, jitter time.Duration, seed uint64) (proxies, error) {
	var ps proxies
	for i, t := range targets {
		p, err := NewProxy(t, delay, jitter, seed+uint64(i)<<32)
		if err != nil {
			ps.Close()
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// Addrs returns the proxies' addresses, in target order.
func (ps proxies) Addrs() []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Addr()
	}
	return out
}

// Reset resets every proxy's connections.
func (ps proxies) Reset() {
	for _, p := range ps {
		p.Reset()
	}
}

// Cut cuts every proxy.
func (ps proxies) Cut() {
	for _, p := range ps {
		p.Cut()
	}
}

// Close closes every proxy.
func (ps proxies) Close() error {
	var errs []error
	for _, p := range ps {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}
