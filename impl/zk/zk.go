package zk

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/zkconn"
	"github.com/lockbench/lockbench/result"
)

func init() {
	impl.Register(impl.Driver{
		Name:        "zk-naive",
		Recipe:      "ZooKeeper's lock recipe, every waiter watching all children (the herd the recipe warns of)",
		Description: "ZooKeeper, every waiter watches all children (herd effect)",
		Needs:       []impl.Need{Ensemble},
		Caps:        impl.LeaseSession | impl.Fencing,
		Theory:      &result.WatchAll,
		New:         func(ctx context.Context, cfg impl.Config) (impl.Locker, error) { return New(ctx, cfg, Naive) },
		Cleanup:     Cleanup,
		Residue:     Residue,
	})
	impl.Register(impl.Driver{
		Name:        "zk-pred",
		Recipe:      "ZooKeeper's lock recipe (ephemeral sequential nodes, predecessor watch)",
		Description: "ZooKeeper recipe, each waiter watches its predecessor only",
		Needs:       []impl.Need{Ensemble},
		Caps:        impl.LeaseSession | impl.Fencing,
		Theory:      &result.WatchPredecessor,
		New:         func(ctx context.Context, cfg impl.Config) (impl.Locker, error) { return New(ctx, cfg, Predecessor) },
		Cleanup:     Cleanup,
		Residue:     Residue,
	})
}

// Ensemble is the ZooKeeper ensemble the locks use (--zk, LOCKBENCH_ZK).
var Ensemble = zkconn.Ensemble

// Mode is how a waiter waits.
type Mode int

const (
	// Naive watches all children of the lock node.
	Naive Mode = iota
	// Predecessor watches the next-lower node only.
	Predecessor
)

// Locker is one ZooKeeper client with its own session.
type Locker struct {
	conn     *zk.Conn
	mode     Mode
	cfg      impl.Config
	counters impl.Counters
	parents  map[string]string // lock name → parent path

	armed atomic.Bool
	// seen is Counters.Notifications as it was just before the read that
	// set the current watch. Any notification since — even one the waiter
	// has taken off its channel but not acted on yet — unsettles it.
	seen atomic.Int64
	// read is the children version (the parent's cversion) of the read
	// that set the current watch, and latest the highest any client of
	// this process has read of the same lock (naive mode; see Settled).
	read   atomic.Int64
	latest atomic.Pointer[atomic.Int64]
}

// New opens a session to cfg.Servers.ZK and returns once it is established,
// or an error wrapping impl.ErrUnreachable within cfg.DialTimeout (see
// zkconn.Dial).
func New(ctx context.Context, cfg impl.Config, mode Mode) (*Locker, error) {
	cfg = cfg.WithDefaults()
	l := &Locker{mode: mode, cfg: cfg, parents: map[string]string{}}
	conn, err := zkconn.Dial(ctx, cfg, &l.counters, nil)
	if err != nil {
		return nil, err
	}
	l.conn = conn
	return l, nil
}

// Counters returns this client's counters.
func (l *Locker) Counters() *impl.Counters { return &l.counters }

// Close ends the session; its ephemeral nodes go with it.
func (l *Locker) Close() error { l.conn.Close(); return nil }

// Settled reports whether Acquire is blocked on a watch and no notification
// has reached the connection since the read that set it. The count is kept
// by the connection's event callback, which runs before the event reaches
// the waiter, so there is no moment at which an event is in the waiter's
// hands and the client still looks settled.
//
// A waiter that watches every change is settled only once its last read
// saw the latest version of the queue any client has read: a release
// whose notification is still on its way to this client's connection —
// delivered to the next holder first — has not reached it yet, and a
// second release before it re-reads would fold two releases into one
// wake-up. The versions are shared within the process only to make the
// burst's hand-off barrier exact; they cost the server nothing.
func (l *Locker) Settled() bool {
	if !l.armed.Load() || l.counters.Notifications.Load() != l.seen.Load() {
		return false
	}
	latest := l.latest.Load()
	return l.mode != Naive || latest == nil || l.read.Load() >= latest.Load()
}

// versions holds, per lock parent node, the highest children version read
// by any client in this process (naive mode's barrier, see Settled). A
// node is known by its creation zxid and time too: one created again
// under the same path, on this server or a fresh one, starts afresh.
var versions sync.Map // nodeVersion → *atomic.Int64

type nodeVersion struct {
	path         string
	czxid, ctime int64
}

// noteRead records the children version a read of parent returned, and
// returns it as the client's mark on the queue.
func (l *Locker) noteRead(parent string, stat *zk.Stat) mark {
	if l.mode != Naive {
		return mark{}
	}
	key := nodeVersion{parent, stat.Czxid, stat.Ctime}
	v, ok := versions.Load(key)
	if !ok {
		v, _ = versions.LoadOrStore(key, new(atomic.Int64))
	}
	latest := v.(*atomic.Int64)
	l.read.Store(int64(stat.Cversion))
	raise(latest, int64(stat.Cversion))
	l.latest.Store(latest)
	return mark{latest: latest, read: int64(stat.Cversion)}
}

// mark is a naive waiter's last read of a queue: the children version it
// saw, and the process's latest for that queue (see Settled). The zero
// mark, a predecessor waiter's, marks nothing.
type mark struct {
	latest *atomic.Int64
	read   int64
}

// deleted notes that the client deleted its own node after the read m
// records: the queue's version is past that read now, so a waiter whose
// last read is not past it is unsettled, though the deletion's
// notification may not have reached its connection yet. Without it a
// waiter that gave up and the next one to give up could fold into one
// wake-up for the waiters behind them, as two releases would without the
// next holder's read of the queue.
func (m mark) deleted() {
	if m.latest != nil {
		raise(m.latest, m.read+1)
	}
}

// raise sets v to at least n.
func raise(v *atomic.Int64, n int64) {
	for {
		cur := v.Load()
		if n <= cur || v.CompareAndSwap(cur, n) {
			return
		}
	}
}

// Prepare creates the parent nodes of the named locks.
func (l *Locker) Prepare(ctx context.Context, names []string) error {
	defer zkconn.Bound(ctx, l.conn)()
	for _, n := range names {
		if err := l.ensureParent(l.parent(n)); err != nil {
			return err
		}
	}
	return nil
}

func (l *Locker) parent(name string) string {
	p, ok := l.parents[name]
	if !ok {
		p = zkconn.Path(l.cfg.Namespace, name)
		l.parents[name] = p
	}
	return p
}

// ensureParent creates each level of p that is missing (persistent: see
// zkconn.EnsurePath; Cleanup removes them after the cell).
func (l *Locker) ensureParent(p string) error {
	return zkconn.EnsurePath(l.conn, p, &l.counters)
}

// Cleanup deletes a cell's lock nodes and its namespace node, on a
// connection of its own. Nodes still in use (a session not yet gone) stay.
func Cleanup(ctx context.Context, s impl.Servers, namespace string) error {
	if namespace == "" || len(s[Ensemble.Role]) == 0 {
		return nil
	}
	ns := zkconn.Root + "/" + namespace
	versions.Range(func(k, _ any) bool { // the cell's locks are done with
		if strings.HasPrefix(k.(nodeVersion).path, ns+"/") {
			versions.Delete(k)
		}
		return true
	})
	l, err := New(ctx, impl.Config{Servers: s, DialTimeout: 5 * time.Second}, Predecessor)
	if err != nil {
		return err
	}
	defer zkconn.Bound(ctx, l.conn)()
	defer l.Close()
	locks, _, err := l.conn.Children(ns)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return zkconn.Wrap("cleanup", err)
	}
	var errs []error
	for _, n := range locks {
		if err := l.conn.Delete(ns+"/"+n, -1); err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNotEmpty) {
			errs = append(errs, err)
		}
	}
	if err := l.conn.Delete(ns, -1); err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNotEmpty) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Residue counts the queue nodes under a cell's lock nodes, on a
// connection of its own.
func Residue(ctx context.Context, s impl.Servers, namespace string) (int, error) {
	l, err := New(ctx, impl.Config{Servers: s, DialTimeout: 5 * time.Second}, Predecessor)
	if err != nil {
		return 0, err
	}
	defer zkconn.Bound(ctx, l.conn)()
	defer l.Close()
	ns := zkconn.Root + "/" + namespace
	locks, _, err := l.conn.Children(ns)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, zkconn.Wrap("residue", err)
	}
	n := 0
	for _, lock := range locks {
		_, stat, err := l.conn.Get(ns + "/" + lock)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return 0, zkconn.Wrap("residue", err)
		}
		if stat != nil {
			n += int(stat.NumChildren)
		}
	}
	return n, nil
}

func (l *Locker) op() { zkconn.Op(&l.counters) }

// Acquire queues an ephemeral sequential node and waits until it is the
// lowest. On cancellation it deletes its node, so no dead entry stays in
// the queue.
//
// A predecessor waiter whose last read had only its predecessor ahead
// takes the lock when that node is deleted, without reading the queue
// again: a node ahead of it was created before its own, so that read
// listed every one still there, and none can join ahead later. The
// re-read would only confirm it, one round trip on the hand-off's path
// when queues are short (two clients, or many locks).
func (l *Locker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	defer zkconn.Bound(ctx, l.conn)()
	parent := l.parent(name)
	path, err := l.create(parent)
	if err != nil {
		return nil, err
	}
	me := path[len(parent)+1:]
	seq, _ := strconv.ParseUint(seqOf(me), 10, 64)

	var prev queueSeen // the queue read before the last wake-up (naive)
	var m mark         // the last read's version (naive)
	woken := false
	for {
		var children []string
		var ch <-chan zk.Event
		l.seen.Store(l.counters.Notifications.Load())
		l.op()
		var stat *zk.Stat
		if l.mode == Naive {
			children, stat, ch, err = l.conn.ChildrenW(parent)
		} else {
			children, stat, err = l.conn.Children(parent)
		}
		if err != nil {
			return nil, l.abandon(path, m, zkconn.Wrap("children", err))
		}
		m = l.noteRead(parent, stat)
		l.counters.ChildrenRead.Add(int64(len(children)))
		pos, pred, found := standing(children, me)
		if !found {
			return nil, l.abandon(path, m, fmt.Errorf("zk: own node %s vanished: %w", path, impl.ErrSessionLost))
		}
		if woken {
			if l.mode == Naive {
				if prev.goneFrom(children) {
					l.counters.ReleaseWakeups.Add(1)
				} else {
					l.counters.ArrivalWakeups.Add(1)
				}
			}
			if pos != 0 {
				l.counters.WastedWakeups.Add(1)
			}
		}
		if pos == 0 {
			return &lease{l: l, path: path, seq: seq, m: m}, nil
		}
		if l.mode == Predecessor {
			l.op()
			var ok bool
			ok, _, ch, err = l.conn.ExistsW(parent + "/" + pred)
			if err != nil {
				return nil, l.abandon(path, m, zkconn.Wrap("exists", err))
			}
			if !ok { // gone between the two reads: look again, no wake-up
				woken = false
				continue
			}
		}
		prev = seenOf(children)
		l.counters.Retries.Add(1)
		ev, err := l.wait(ctx, ch)
		if err != nil {
			return nil, l.abandon(path, m, err)
		}
		if ev.Type == zk.EventNotWatching {
			return nil, l.abandon(path, m, zkconn.Wrap("watch", fmt.Errorf("%w: %v", impl.ErrSessionLost, ev.Err)))
		}
		l.counters.Wakeups.Add(1)
		if l.mode == Predecessor && ev.Type == zk.EventNodeDeleted {
			l.counters.ReleaseWakeups.Add(1)
			if pos == 1 { // see Acquire: nothing is left ahead
				return &lease{l: l, path: path, seq: seq, m: m}, nil
			}
		}
		woken = true
	}
}

func (l *Locker) wait(ctx context.Context, ch <-chan zk.Event) (zk.Event, error) {
	l.armed.Store(true)
	defer l.armed.Store(false)
	select {
	case ev := <-ch:
		return ev, nil
	case <-ctx.Done():
		return zk.Event{}, ctx.Err()
	}
}

// abandon deletes our queued node after a failed or cancelled wait; m is
// the last read of the queue.
func (l *Locker) abandon(path string, m mark, cause error) error {
	l.op()
	if err := l.conn.Delete(path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return errors.Join(cause, zkconn.Wrap("delete "+path, err))
	}
	m.deleted()
	return cause
}

// standing is where the node me stands in a queue read from the server, in
// the server's order: how many nodes are ahead of it, the one just ahead,
// and whether me is there at all. One pass, no sort: the naive recipe
// reads the whole queue on every wake-up, two million times in a burst of
// 2,000 clients, and sorting it cost more than all the rest of the
// client's own work.
func standing(children []string, me string) (ahead int, pred string, found bool) {
	mine := seqOf(me)
	predSeq := ""
	for _, c := range children {
		s := seqOf(c)
		switch {
		case s < mine:
			ahead++
			if s > predSeq {
				predSeq, pred = s, c
			}
		case c == me:
			found = true
		}
	}
	return ahead, pred, found
}

// queueSeen is what a naive waiter keeps of the queue it read before
// waiting: how many nodes, and the last. Sequence numbers only grow, so a
// later read still holds every node seen iff it holds as many up to that
// last one. Keeping the names instead held two copies of the whole queue
// per waiter — with 2,000 waiters, hundreds of megabytes, re-made on every
// wake-up.
type queueSeen struct {
	n    int
	last string // the last one's sequence number
}

// seenOf notes children, in any order.
func seenOf(children []string) queueSeen {
	last := ""
	for _, c := range children {
		last = max(last, seqOf(c))
	}
	return queueSeen{n: len(children), last: strings.Clone(last)}
}

// goneFrom reports whether a node seen is missing from after, in any
// order.
func (s queueSeen) goneFrom(after []string) bool {
	held := 0
	for _, c := range after {
		if seqOf(c) <= s.last {
			held++
		}
	}
	return held < s.n
}

// Queue nodes are named n-<id>-<sequence>: id is unique to the request, so
// that a create whose reply was lost with the connection can be found
// again instead of leaving an orphan ahead of its own client (the
// recipe's "protected" create); the server appends a 10-digit sequence.
const seqDigits = 10

func seqOf(name string) string {
	if len(name) < seqDigits {
		return name
	}
	return name[len(name)-seqDigits:]
}

var (
	processNonce = func() string {
		var b [8]byte
		crand.Read(b[:])
		return strconv.FormatUint(binary.BigEndian.Uint64(b[:]), 36)
	}()
	requestSeq atomic.Uint64
)

// nodePrefix is the name of request seq's node before the server's
// sequence: n-<process>.<request>-, both in base 36. Every waiter reads
// the whole queue's names twice per acquisition, and so does the server
// write them: at 32 clients 63 names, at 128 clients 260. Written in hex
// (32 digits) the id made each name 45 bytes; in base 36 a name is at
// most 31 for a process's first 1.6 million requests, and as unique (64
// random bits per process, a counter per request).
func nodePrefix(seq uint64) string {
	return "n-" + processNonce + "." + strconv.FormatUint(seq, 36) + "-"
}

// create queues this client: an ephemeral sequential node under parent.
// If the connection drops before the reply, the node may exist or not; it
// is looked for by its id, and created again only when it is not there. A
// session that expired cannot own a node: that is session_lost.
func (l *Locker) create(parent string) (string, error) {
	prefix := nodePrefix(requestSeq.Add(1))
	var err error
	for range 3 {
		l.op()
		var path string
		path, err = l.conn.Create(parent+"/"+prefix, nil, zk.FlagEphemeralSequential, zkconn.ACL)
		switch {
		case err == nil:
			return path, nil
		case errors.Is(err, zk.ErrNoNode): // the lock node is missing: make it
			if err = l.ensureParent(parent); err != nil {
				return "", err
			}
		case errors.Is(err, zk.ErrConnectionClosed):
			l.op()
			kids, _, cerr := l.conn.Children(parent)
			if cerr != nil {
				return "", zkconn.Wrap("find own node", cerr)
			}
			for _, k := range kids {
				if strings.HasPrefix(k, prefix) {
					return parent + "/" + k, nil
				}
			}
		default:
			return "", zkconn.Wrap("create", err)
		}
	}
	return "", zkconn.Wrap("create", err)
}

type lease struct {
	l    *Locker
	path string
	seq  uint64
	m    mark // the read that found the node lowest
}

// Fence returns the node's sequence number, which grows in grant order.
func (s *lease) Fence() (uint64, bool) { return s.seq, true }

func (s *lease) Release(ctx context.Context) error {
	defer zkconn.Bound(ctx, s.l.conn)()
	s.l.op()
	err := s.l.conn.Delete(s.path, -1)
	if errors.Is(err, zk.ErrNoNode) {
		s.l.counters.Lost.Add(1)
		return fmt.Errorf("zk %s: %w", s.path, impl.ErrLockLost)
	}
	if err != nil {
		return zkconn.Wrap("delete", err)
	}
	s.m.deleted()
	return nil
}
