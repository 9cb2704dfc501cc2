package zkephemeral

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
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
		Name:   "zk-ephemeral",
		Recipe: "the single-ephemeral-node ZooKeeper lock (no queue)",
		Description: "ZooKeeper, one ephemeral node per lock: waiters watch it and all race to create it again " +
			"when it goes (herd: n(n−1)/2 wake-ups and failed creates per burst); token: the node's czxid, read by an exists after the create",
		Needs:   []impl.Need{zk.Ensemble},
		Caps:    impl.LeaseSession | impl.Fencing,
		Theory:  &Theory,
		New:     New,
		Cleanup: Cleanup,
		Residue: Residue,
	})
}

// Theory is what watching the one node predicts: every release wakes every
// waiter, n(n−1)/2 to drain n. The failed creates that follow are not
// declared: they are as measured.
var Theory = result.Theory{Waiters: "all watch the node, race to create", Formula: "n(n−1)/2",
	PerHandoffFormula: "n−1", Poly: [3]float64{0, -0.5, 0.5}}

// Locker is one client with its own ZooKeeper session.
type Locker struct {
	conn     *gozk.Conn
	cfg      impl.Config
	counters impl.Counters
	paths    map[string]string // lock name → node path

	// Settled's view of the wait: armed while blocked on a watch; seen is
	// Counters.Notifications just before the exists call that set it;
	// watched the session owning the node watched, and holder the owner
	// the lock's last winner in this process published (see Settled).
	armed   atomic.Bool
	seen    atomic.Int64
	watched atomic.Int64
	holder  atomic.Pointer[atomic.Int64]
}

// New opens a session to cfg's ZooKeeper ensemble and returns once it is
// established, or an error wrapping impl.ErrUnreachable within
// cfg.DialTimeout.
func New(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
	cfg = cfg.WithDefaults()
	l := &Locker{cfg: cfg, paths: map[string]string{}}
	conn, err := zkconn.Dial(ctx, cfg, &l.counters, nil)
	if err != nil {
		return nil, err
	}
	l.conn = conn
	return l, nil
}

// Counters returns this client's counters.
func (l *Locker) Counters() *impl.Counters { return &l.counters }

// Close ends the session; a node it holds goes with it.
func (l *Locker) Close() error { l.conn.Close(); return nil }

// holders holds, per lock node path, the session that last created it in
// this process (see Settled). It costs the server nothing.
var holders sync.Map // path → *atomic.Int64

func holderOf(p string) *atomic.Int64 {
	v, ok := holders.Load(p)
	if !ok {
		v, _ = holders.LoadOrStore(p, new(atomic.Int64))
	}
	return v.(*atomic.Int64)
}

// Cleanup removes a cell's nodes (zk.Cleanup: the layout is the same) and
// forgets its holders.
func Cleanup(ctx context.Context, s impl.Servers, namespace string) error {
	prefix := zkconn.Path(namespace, "")
	holders.Range(func(k, _ any) bool {
		if strings.HasPrefix(k.(string), prefix) {
			holders.Delete(k)
		}
		return true
	})
	return zk.Cleanup(ctx, s, namespace)
}

// Prepare creates the namespace node the locks' nodes live under.
func (l *Locker) Prepare(ctx context.Context, names []string) error {
	defer zkconn.Bound(ctx, l.conn)()
	if len(names) == 0 {
		return nil
	}
	return zkconn.EnsurePath(l.conn, path.Dir(l.path(names[0])), &l.counters)
}

func (l *Locker) path(name string) string {
	p, ok := l.paths[name]
	if !ok {
		p = zkconn.Path(l.cfg.Namespace, name)
		l.paths[name] = p
	}
	return p
}

// Settled reports whether Acquire is blocked on its exists watch with no
// notification received since the call that set it, and the node it
// watches is the one the lock's latest winner created. The last condition
// makes the burst's barrier exact: a waiter whose notification of the
// previous release is still on its way watches a node already gone, and a
// second release before it re-arms would fold two wake-ups into one. The
// winner publishes its session before its Acquire returns, and takes it
// back once its release deleted the node (between the two no client of
// this process holds the lock, and a burst's barrier, which a holder
// runs, is not waiting); the owner of a watched node comes back with the
// exists call.
func (l *Locker) Settled() bool {
	if !l.armed.Load() || l.counters.Notifications.Load() != l.seen.Load() {
		return false
	}
	h := l.holder.Load()
	if h == nil {
		return true
	}
	owner := h.Load()
	return owner == 0 || owner == l.watched.Load()
}

// Acquire creates the lock's node; while another session holds it, it
// waits for the node's deletion and tries again. A grant that lands after
// ctx is done is undone, so that a given-up Acquire leaves no node. Its
// last watch stays set on the server (go-zookeeper cannot remove watches):
// it fires once, on the next release, as a notification nobody waits for,
// which server and client count alike.
func (l *Locker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	defer zkconn.Bound(ctx, l.conn)()
	p := l.path(name)
	holder := holderOf(p)
	l.holder.Store(holder)
	woken, closed := false, 0
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		zkconn.Op(&l.counters)
		_, err := l.conn.Create(p, nil, gozk.FlagEphemeral, zkconn.ACL)
		switch {
		case err == nil:
			czxid, err := l.czxid(ctx, p)
			if err != nil {
				return nil, err
			}
			return l.grant(ctx, p, holder, czxid)
		case errors.Is(err, gozk.ErrNodeExists):
			l.counters.FailedCreates.Add(1)
			l.counters.Retries.Add(1)
			if woken {
				l.counters.WastedWakeups.Add(1)
			}
		case errors.Is(err, gozk.ErrNoNode): // the namespace node is missing
			if err := zkconn.EnsurePath(l.conn, path.Dir(p), &l.counters); err != nil {
				return nil, l.fail(ctx, err)
			}
			continue
		case errors.Is(err, gozk.ErrConnectionClosed) && closed < 3:
			// The create may have landed before the connection dropped: the
			// next create then finds the node, and the exists call its owner.
			closed++
			continue
		default:
			return nil, l.fail(ctx, zkconn.Wrap("create "+p, err))
		}
		woken = false
		ev, mine, err := l.watch(ctx, p)
		switch {
		case err != nil:
			return nil, err
		case mine != 0:
			return l.grant(ctx, p, holder, mine)
		case ev == nil: // gone between the create and the exists: try again
			continue
		}
		l.counters.Wakeups.Add(1)
		if ev.Type == gozk.EventNodeDeleted {
			l.counters.ReleaseWakeups.Add(1)
		}
		woken = true
	}
}

// watch sets an exists watch on p and waits for it to fire. It returns no
// event when p was already gone, and mine, the node's czxid, when p is
// this session's own node (a create whose reply was lost with the
// connection).
func (l *Locker) watch(ctx context.Context, p string) (ev *gozk.Event, mine uint64, err error) {
	l.seen.Store(l.counters.Notifications.Load())
	zkconn.Op(&l.counters)
	ok, stat, ch, err := l.conn.ExistsW(p)
	if err != nil {
		return nil, 0, l.fail(ctx, zkconn.Wrap("exists "+p, err))
	}
	if !ok {
		return nil, 0, nil
	}
	if stat.EphemeralOwner == l.conn.SessionID() {
		return nil, uint64(stat.Czxid), nil
	}
	l.watched.Store(stat.EphemeralOwner)
	l.armed.Store(true)
	defer l.armed.Store(false)
	select {
	case e := <-ch:
		if e.Type == gozk.EventNotWatching {
			return nil, 0, l.fail(ctx, zkconn.Wrap("watch "+p, fmt.Errorf("%w: %v", impl.ErrSessionLost, e.Err)))
		}
		return &e, 0, nil
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
}

// czxid reads the zxid that created p, this session's node just created:
// go-zookeeper's Create returns the path alone, and keeps the reply's
// zxid to itself, so the token costs an exists call. A node already gone
// or another session's means the session ended in between.
func (l *Locker) czxid(ctx context.Context, p string) (uint64, error) {
	zkconn.Op(&l.counters)
	ok, stat, err := l.conn.Exists(p)
	switch {
	case err != nil:
		return 0, l.fail(ctx, zkconn.Wrap("exists "+p, err))
	case !ok || stat.EphemeralOwner != l.conn.SessionID():
		return 0, l.fail(ctx, fmt.Errorf("zk %s: gone right after its create: %w", p, impl.ErrSessionLost))
	}
	return uint64(stat.Czxid), nil
}

// grant makes the lease of the node this session just created, with the
// zxid that created it, publishing its owner for Settled; a grant after
// ctx is done is undone instead.
func (l *Locker) grant(ctx context.Context, p string, holder *atomic.Int64, czxid uint64) (impl.Lease, error) {
	session := l.conn.SessionID()
	holder.Store(session)
	if err := ctx.Err(); err != nil {
		zkconn.Op(&l.counters)
		if derr := l.conn.Delete(p, -1); derr != nil && !errors.Is(derr, gozk.ErrNoNode) {
			return nil, errors.Join(err, zkconn.Wrap("delete "+p, derr))
		}
		return nil, err
	}
	return &lease{l: l, path: p, session: session, czxid: czxid}, nil
}

// fail is err, or ctx's error once ctx is done: a call cut short by the
// deadline reports the deadline, whatever the connection said.
func (l *Locker) fail(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return err
}

type lease struct {
	l       *Locker
	path    string
	session int64
	czxid   uint64
}

// Fence is the zxid that created the lock's node: every grant is the same
// path created afresh, each create a later transaction than the delete —
// or the session's expiry — that ended the grant before it.
func (s *lease) Fence() (uint64, bool) { return s.czxid, true }

// Release deletes the node. When the session that created it has expired
// the node went with it, and the one at the path now may be another
// client's: it is left alone and the lease reported lost.
func (s *lease) Release(ctx context.Context) error {
	l := s.l
	defer zkconn.Bound(ctx, l.conn)()
	if l.conn.SessionID() != s.session {
		l.counters.Lost.Add(1)
		return fmt.Errorf("zk %s: session expired: %w", s.path, impl.ErrLockLost)
	}
	zkconn.Op(&l.counters)
	err := l.conn.Delete(s.path, -1)
	if errors.Is(err, gozk.ErrNoNode) {
		l.counters.Lost.Add(1)
		return fmt.Errorf("zk %s: %w", s.path, impl.ErrLockLost)
	}
	if err != nil {
		return l.fail(ctx, zkconn.Wrap("delete "+s.path, err))
	}
	// The node is gone: its owner is nobody's to watch any more. Left in
	// place, a process whose last winner this was — its clients a shard
	// of a run whose next winner is in another process — would take every
	// waiter watching the new node for unsettled (see Settled).
	holderOf(s.path).CompareAndSwap(s.session, 0)
	return nil
}

var (
	_ impl.Settler  = (*Locker)(nil)
	_ impl.Preparer = (*Locker)(nil)
)
