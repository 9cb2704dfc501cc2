package zklock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	gozk "github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/zk"
	"github.com/lockbench/lockbench/impl/zkconn"
	"github.com/lockbench/lockbench/result"
)

func init() {
	impl.Register(impl.Driver{
		Name:    "zk-lock",
		Library: "github.com/go-zookeeper/zk",
		Description: "go-zookeeper's zk.Lock (predecessor watch); its Lock() cannot be cancelled, " +
			"so a given-up Acquire closes the client's session and opens another; no token: zk.Lock keeps its node's path and " +
			"sequence unexported (v1.0.4), so its users can fence only with a counter drawn after the grant",
		Needs:   []impl.Need{zk.Ensemble},
		Caps:    impl.LeaseSession,
		Theory:  &result.WatchPredecessor,
		New:     New,
		Cleanup: zk.Cleanup,
		Residue: zk.Residue,
	})
}

// Locker is one client: one zk.Lock at a time on a session of its own.
type Locker struct {
	cfg      impl.Config
	counters impl.Counters
	paths    map[string]string // lock name → zk.Lock's path

	// mu guards the session: the one in use, or the one being opened
	// after a given-up Acquire closed the last.
	mu     sync.Mutex
	conn   *gozk.Conn
	next   chan struct{} // closed when the session being opened is ready
	closed bool

	wire atomic.Pointer[armedState] // the session's; nil while none
}

// New opens a session to cfg's ZooKeeper ensemble and returns once it is
// established, or an error wrapping impl.ErrUnreachable within
// cfg.DialTimeout.
func New(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
	cfg = cfg.WithDefaults()
	l := &Locker{cfg: cfg, paths: map[string]string{}}
	conn, wire, err := l.dial(ctx)
	if err != nil {
		return nil, err
	}
	l.conn = conn
	l.wire.Store(wire)
	return l, nil
}

// dial opens a session whose traffic reports to a fresh armedState, and
// whose events are counted: every notification is zk.Lock's predecessor
// watch firing, which it acts on — a wake-up, and a release one when the
// node was deleted.
func (l *Locker) dial(ctx context.Context) (*gozk.Conn, *armedState, error) {
	wire := newArmedState(&l.counters)
	conn, err := zkconn.Dial(ctx, l.cfg, &l.counters, gozk.WithDialer(dialer(wire)))
	return conn, wire, err
}

// Counters returns this client's counters; Wakeups and ReleaseWakeups are
// derived from Notifications (see Counters in the package doc).
func (l *Locker) Counters() *impl.Counters { return &l.counters }

// Close ends the session, or the one being opened; nodes go with it.
func (l *Locker) Close() error {
	l.mu.Lock()
	l.closed = true
	conn, next := l.conn, l.next
	l.mu.Unlock()
	if next != nil {
		<-next
		l.mu.Lock()
		conn = l.conn
		l.mu.Unlock()
	}
	if conn != nil {
		conn.Close()
	}
	return nil
}

// Settled reports whether zk.Lock is blocked on its predecessor watch with
// nothing in flight (see armedState).
func (l *Locker) Settled() bool {
	w := l.wire.Load()
	return w != nil && w.armed.Load()
}

// Prepare creates the lock nodes zk.Lock queues under.
func (l *Locker) Prepare(ctx context.Context, names []string) error {
	conn, err := l.session(ctx)
	if err != nil {
		return err
	}
	defer zkconn.Bound(ctx, conn)()
	var counted impl.Counters // the session's traffic counts them already
	for _, n := range names {
		if err := zkconn.EnsurePath(conn, l.path(n), &counted); err != nil {
			return err
		}
	}
	return nil
}

func (l *Locker) path(name string) string {
	p, ok := l.paths[name]
	if !ok {
		p = zkconn.Path(l.cfg.Namespace, name)
		l.paths[name] = p
	}
	return p
}

var errClosed = errors.New("zk: client closed")

// session returns the session in use, waiting (within ctx) for the one
// being opened; if opening it failed, it tries again, within ctx.
func (l *Locker) session(ctx context.Context) (*gozk.Conn, error) {
	l.mu.Lock()
	next := l.next
	l.mu.Unlock()
	if next != nil {
		select {
		case <-next:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	l.mu.Lock()
	conn, closed := l.conn, l.closed
	l.mu.Unlock()
	switch {
	case conn != nil:
		return conn, nil
	case closed:
		return nil, errClosed
	}
	conn, wire, err := l.dial(ctx)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		conn.Close()
		return nil, errClosed
	}
	l.conn = conn
	l.wire.Store(wire)
	return conn, nil
}

// replace closes conn, taking its queued node out of the queue, and opens
// a new session in the background.
func (l *Locker) replace(conn *gozk.Conn) {
	conn.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != conn || l.closed {
		return
	}
	next := make(chan struct{})
	l.conn, l.next = nil, next
	l.wire.Store(nil)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), l.cfg.DialTimeout)
		defer cancel()
		// A failure leaves no session: the next Acquire opens one.
		c, w, _ := l.dial(ctx)
		l.mu.Lock()
		l.conn, l.next = c, nil
		if w != nil {
			l.wire.Store(w)
		}
		l.mu.Unlock()
		close(next)
	}()
}

// Acquire runs zk.Lock's Lock in a goroutine and waits for it or for ctx.
// When ctx ends first, or Lock fails, the session is closed (see the
// package doc) and ctx's error, or Lock's, returned.
func (l *Locker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	conn, err := l.session(ctx)
	if err != nil {
		return nil, err
	}
	p := l.path(name)
	lk := gozk.NewLock(conn, p, zkconn.ACL)
	before := l.counters.Notifications.Load()
	done := make(chan error, 1)
	go func() { done <- lk.Lock() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		l.replace(conn)
		l.wake(before)
		return nil, ctx.Err()
	}
	l.wake(before)
	if err != nil {
		l.replace(conn)
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, zkconn.Wrap("lock "+p, err)
	}
	if cerr := ctx.Err(); cerr != nil { // granted too late: give it back
		stop := zkconn.Bound(ctx, conn)
		uerr := lk.Unlock()
		stop()
		if uerr != nil {
			l.replace(conn)
		}
		return nil, cerr
	}
	return &lease{l: l, lk: lk, conn: conn, path: p}, nil
}

// wake counts the notifications since before as zk.Lock's wake-ups: each
// is its predecessor watch firing on the node's deletion, the only watch
// it sets. The connection counts a notification before the library hands
// it on, so none that Lock acted on is missed.
func (l *Locker) wake(before int64) {
	if n := l.counters.Notifications.Load() - before; n > 0 {
		l.counters.Wakeups.Add(n)
		l.counters.ReleaseWakeups.Add(n)
	}
}

type lease struct {
	l    *Locker
	lk   *gozk.Lock
	conn *gozk.Conn
	path string
}

// Fence says there is no token: zk.Lock (v1.0.4) keeps its node's path
// and sequence in unexported fields and returns neither. The lowest
// child's sequence, listed after the grant, would be one only while the
// session lasts — a read after the grant, as racy as the post-grant
// counter the fault scenarios already draw.
func (s *lease) Fence() (uint64, bool) { return 0, false }

// Release is zk.Lock's Unlock: it deletes the lock's node. When the
// session that made it expired the node went with it: the lease was lost.
func (s *lease) Release(ctx context.Context) error {
	defer zkconn.Bound(ctx, s.conn)()
	err := s.lk.Unlock()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gozk.ErrNoNode):
		s.l.counters.Lost.Add(1)
		return fmt.Errorf("zk %s: %w", s.path, impl.ErrLockLost)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return zkconn.Wrap("unlock "+s.path, err)
}

var (
	_ impl.Settler  = (*Locker)(nil)
	_ impl.Preparer = (*Locker)(nil)
)
