package etcdmutex

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/result"
)

func init() {
	impl.Register(impl.Driver{
		Name: "etcd-recipe",
		Description: "lease-bound keys queued by create revision, each waiter watches its predecessor from the server's " +
			"current revision: concurrency.Mutex's algorithm without its 100 ms resync wait",
		Recipe:  "etcd's concurrency.Mutex (the watch started at the current revision)",
		Needs:   []impl.Need{Need},
		Caps:    impl.LeaseSession | impl.Fencing,
		Theory:  &result.WatchPredecessor,
		New:     func(ctx context.Context, cfg impl.Config) (impl.Locker, error) { return New(ctx, cfg) },
		Cleanup: Cleanup,
		Residue: Residue,
	})
}

// Need is the etcd cluster the lock uses (--etcd, LOCKBENCH_ETCD).
var Need = impl.Need{Role: "etcd", Kind: serverkind.Etcd, Count: 1, Usage: "etcd endpoints, comma-separated", Guard: Guard}

// Root is the prefix of every key the lock writes: Root/<namespace>/<lock>/.
const Root = "/lockbench"

// AbandonAfter bounds the requests that clean up after a failed or
// cancelled Acquire and the lease revocation of Close: they run on a
// context of their own, since the caller's may be done.
const AbandonAfter = 2 * time.Second

// Locker is one client: its own connection and its own session (lease).
type Locker struct {
	cli      *clientv3.Client
	cfg      impl.Config
	ttl      int64 // lease TTL, whole seconds
	counters impl.Counters
	sess     atomic.Pointer[session]

	armed atomic.Bool // waiting on a watch the server confirmed
	// seen is Counters.Notifications as it was just before the read that
	// chose the watched predecessor; any event since unsettles the waiter.
	seen atomic.Int64
}

// session is a concurrency.Session and whether this client ended it.
type session struct {
	*concurrency.Session
	ended atomic.Bool
}

// TTL is the lease TTL in seconds for a session timeout: rounded up, at
// least 1.
func TTL(sessionTimeout time.Duration) int64 {
	return max(1, int64((sessionTimeout+time.Second-1)/time.Second))
}

// New connects to cfg.Servers' etcd endpoints and returns once the client
// holds a lease, or an error wrapping impl.ErrUnreachable within
// cfg.DialTimeout.
func New(ctx context.Context, cfg impl.Config) (*Locker, error) {
	cfg = cfg.WithDefaults()
	addrs := cfg.Servers[Need.Role]
	if len(addrs) == 0 {
		return nil, errors.New("etcd: no server address")
	}
	l := &Locker{cfg: cfg, ttl: TTL(cfg.SessionTimeout)}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   addrs,
		DialTimeout: cfg.DialTimeout,
		Logger:      zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithChainStreamInterceptor(countEvents(&l.counters.Notifications))},
	})
	if err != nil {
		return nil, fmt.Errorf("etcd %s: %w", strings.Join(addrs, ","), err)
	}
	l.cli = cli
	dctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	if err := l.newSession(dctx); err != nil {
		cli.Close()
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case dctx.Err() != nil:
			return nil, fmt.Errorf("etcd %s: %w: no lease within %v", strings.Join(addrs, ","), impl.ErrUnreachable, cfg.DialTimeout)
		}
		return nil, l.wrap("grant", err)
	}
	return l, nil
}

// watchMethod is the gRPC method of etcd watch streams.
const watchMethod = "/etcdserverpb.Watch/Watch"

// countEvents counts the events of every watch response the connection
// receives, as it arrives, before the client library dispatches it.
func countEvents(n *atomic.Int64) grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
		streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		cs, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil || method != watchMethod {
			return cs, err
		}
		return &countingStream{ClientStream: cs, n: n}, nil
	}
}

type countingStream struct {
	grpc.ClientStream
	n *atomic.Int64
}

func (s *countingStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if r, ok := m.(*pb.WatchResponse); ok && err == nil {
		s.n.Add(int64(len(r.Events)))
	}
	return err
}

// newSession grants a lease and keeps it alive on the client's context
// (not ctx, which only bounds the grant).
func (l *Locker) newSession(ctx context.Context) error {
	l.op()
	g, err := l.cli.Grant(ctx, l.ttl)
	if err != nil {
		return err
	}
	cs, err := concurrency.NewSession(l.cli, concurrency.WithLease(g.ID), concurrency.WithTTL(int(l.ttl)))
	if err != nil {
		return err
	}
	s := &session{Session: cs}
	go func() {
		<-s.Done()
		if !s.ended.Load() {
			l.counters.SessionLost.Add(1)
		}
	}()
	l.sess.Store(s)
	return nil
}

// session returns the client's live session, granting a new lease when
// the last one ended under it.
func (l *Locker) session(ctx context.Context) (*session, error) {
	if s := l.sess.Load(); s != nil {
		select {
		case <-s.Done():
		default:
			return s, nil
		}
	}
	if err := l.newSession(ctx); err != nil {
		return nil, err
	}
	return l.sess.Load(), nil
}

// Counters returns this client's counters.
func (l *Locker) Counters() *impl.Counters { return &l.counters }

// Settled reports whether Acquire waits on a confirmed watch with no
// watch event received since the read that chose what it watches.
func (l *Locker) Settled() bool {
	return l.armed.Load() && l.counters.Notifications.Load() == l.seen.Load()
}

// Close stops the keep-alives, revokes the lease (its keys go with it)
// without waiting for its TTL, and closes the connection.
func (l *Locker) Close() error {
	if s := l.sess.Load(); s != nil {
		s.ended.Store(true)
		s.Orphan()
		ctx, cancel := context.WithTimeout(context.Background(), AbandonAfter)
		l.op()
		l.cli.Revoke(ctx, s.Lease()) // if unreachable, the lease ends by itself
		cancel()
	}
	if err := l.cli.Close(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("etcd close: %w", err)
	}
	return nil
}

func (l *Locker) op() { l.counters.RoundTrips.Add(1) }

// prefix is the queue of lock name: every waiter's key starts with it.
func (l *Locker) prefix(name string) string {
	return Root + "/" + l.cfg.Namespace + "/" + name + "/"
}

// place is a client's place in the queue of one lock.
type place struct {
	pfx, key string // the queue's prefix and the client's key in it
	rev      int64  // the key's create revision
	pred     string // the key just ahead, "" when the lock is held
	predRev  int64  // its create revision
	read     int64  // the revision the queue was read at
}

// Acquire queues the client's key for name and waits, watching its
// predecessor, until the key is the oldest. On failure or cancellation the
// key is deleted, so nothing stays queued.
func (l *Locker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	p := &place{pfx: l.prefix(name)}
	var s *session
	var err error
	// A lease that ended while the client was idle is found out here (the
	// keep-alive that would notice may be a third of a TTL away): once,
	// the Acquire goes on with a new one.
	for try := 0; ; try++ {
		if s, err = l.session(ctx); err != nil {
			return nil, fail(ctx, l.wrap("grant", err))
		}
		p.key = p.pfx + fmt.Sprintf("%x", int64(s.Lease()))
		l.seen.Store(l.counters.Notifications.Load())
		if err = l.enqueue(ctx, s, p); err == nil {
			break
		}
		if !errors.Is(err, rpctypes.ErrLeaseNotFound) || try > 0 || ctx.Err() != nil {
			return nil, l.abandon(ctx, p.key, err)
		}
	}
	for p.pred != "" {
		l.counters.Retries.Add(1)
		woken, err := l.waitDelete(ctx, s, p)
		if err != nil {
			return nil, l.abandon(ctx, p.key, err)
		}
		if !woken {
			continue // the queue moved before the watch began: p is read again
		}
		l.counters.Wakeups.Add(1)
		l.counters.ReleaseWakeups.Add(1)
		l.seen.Store(l.counters.Notifications.Load())
		if err := l.predecessor(ctx, p); err != nil {
			return nil, l.abandon(ctx, p.key, err)
		}
		if p.pred != "" {
			l.counters.WastedWakeups.Add(1)
		}
	}
	return &lease{l: l, key: p.key, rev: p.rev}, nil
}

// newest reads the two newest keys of a queue: after the own key's
// creation in the same transaction, the own key and its predecessor.
func newest(pfx string) clientv3.Op {
	return clientv3.OpGet(pfx, clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortDescend), clientv3.WithLimit(2))
}

// enqueue creates p.key under the session's lease unless it exists, and
// fills in p: its create revision, the key just before it in the queue
// ("" if none: the lock is held) and the revision the queue was read at.
func (l *Locker) enqueue(ctx context.Context, s *session, p *place) error {
	l.op()
	resp, err := l.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(p.key), "=", 0)).
		Then(clientv3.OpPut(p.key, "", clientv3.WithLease(s.Lease())), newest(p.pfx)).
		Else(clientv3.OpGet(p.key)).
		Commit()
	if err != nil {
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			s.Orphan() // the lease is gone: session grants another
			err = fmt.Errorf("%w: %w", impl.ErrSessionLost, err)
		}
		return l.wrap("txn", err)
	}
	if !resp.Succeeded {
		// The key is there already: left by an Acquire of this client
		// whose clean-up did not reach the server. It keeps its place.
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			return fmt.Errorf("etcd %s: found and not found in one transaction", p.key)
		}
		p.rev = kvs[0].CreateRevision
		return l.predecessor(ctx, p)
	}
	kvs := resp.Responses[1].GetResponseRange().Kvs
	if len(kvs) == 0 || string(kvs[0].Key) != p.key {
		return fmt.Errorf("etcd %s: the key created is not the newest of its queue", p.key)
	}
	p.rev, p.read, p.pred, p.predRev = resp.Header.Revision, resp.Header.Revision, "", 0
	if len(kvs) > 1 {
		p.pred, p.predRev = string(kvs[1].Key), kvs[1].CreateRevision
	}
	return nil
}

// predecessor reads the key just before p's own (create revision p.rev)
// into p. An own key that is gone or was made again means the session
// ended: impl.ErrSessionLost.
func (l *Locker) predecessor(ctx context.Context, p *place) error {
	l.op()
	resp, err := l.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(p.key), "=", p.rev)).
		Then(clientv3.OpGet(p.pfx, append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(p.rev-1))...)).
		Commit()
	if err != nil {
		return l.wrap("txn", err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("etcd: own key %s vanished while queued: %w", p.key, impl.ErrSessionLost)
	}
	p.read, p.pred, p.predRev = resp.Header.Revision, "", 0
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		p.pred, p.predRev = string(kvs[0].Key), kvs[0].CreateRevision
	}
	return nil
}

// waitDelete watches p.pred until it is deleted (woken), the session ends
// or ctx is done.
//
// The watch starts at the server's current revision rather than at the
// one after p.read: a watch that starts in the past is "unsynced", and
// the server catches such watches up on a 100 ms tick, so a release right
// after it would reach the waiter up to 100 ms late. Starting now, the
// watch could miss a delete between the read and the watch; the server's
// reply to the watch's creation says its revision then, and if the queue
// changed since p.read it is read again (one more round trip). If p.pred
// is no longer just ahead, waitDelete returns not woken with p read anew.
func (l *Locker) waitDelete(ctx context.Context, s *session, p *place) (woken bool, err error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer l.armed.Store(false)
	l.op()
	wch := l.cli.Watch(wctx, p.pred, clientv3.WithFilterPut(), clientv3.WithCreatedNotify())
	for {
		select {
		case resp, ok := <-wch:
			switch {
			case !ok:
				if ctx.Err() != nil {
					return false, ctx.Err()
				}
				return false, fmt.Errorf("etcd: watch of %s closed", p.pred)
			case resp.Err() != nil:
				return false, l.wrap("watch", resp.Err())
			case resp.Created && resp.Header.Revision > p.read:
				pred, predRev := p.pred, p.predRev
				l.seen.Store(l.counters.Notifications.Load())
				if err := l.predecessor(ctx, p); err != nil {
					return false, err
				}
				if p.pred != pred || p.predRev != predRev {
					return false, nil
				}
				l.armed.Store(true)
			case resp.Created:
				l.armed.Store(true)
			}
			for _, ev := range resp.Events {
				if ev.Type == mvccpb.DELETE {
					return true, nil
				}
			}
		case <-s.Done():
			return false, fmt.Errorf("etcd: lease %x ended while waiting: %w", int64(s.Lease()), impl.ErrSessionLost)
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// abandon deletes the client's key after a failed or cancelled Acquire,
// on a context of its own: the request that created it may have been
// applied even if its reply never came.
func (l *Locker) abandon(ctx context.Context, key string, cause error) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AbandonAfter)
	defer cancel()
	l.op()
	_, err := l.cli.Delete(dctx, key)
	cause = fail(ctx, cause)
	if err != nil && ctx.Err() == nil {
		return errors.Join(cause, l.wrap("delete "+key, err))
	}
	return cause
}

// fail is the error an Acquire or a Release returns: ctx.Err() once ctx
// is done, whatever the client library made of it, else err.
func fail(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// Past the deadline, whatever the server said (under load etcd may
	// answer "request timed out" first) the wait ended because the
	// caller's time ran out — and the context's timer may not have fired
	// yet.
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return err
}

func (l *Locker) wrap(what string, err error) error { return wrapStatus(what, err) }

// wrapStatus wraps err from the etcd client as impl.ErrUnreachable when
// gRPC says the server could not be reached.
func wrapStatus(what string, err error) error {
	if s, ok := status.FromError(err); ok && s.Code() == codes.Unavailable {
		return fmt.Errorf("etcd %s: %w: %w", what, impl.ErrUnreachable, err)
	}
	return fmt.Errorf("etcd %s: %w", what, err)
}

type lease struct {
	l   *Locker
	key string
	rev int64
}

// Fence returns the key's create revision, which grows in grant order.
func (s *lease) Fence() (uint64, bool) { return uint64(s.rev), true }

// Release deletes the key if it is still the one granted; if not, the
// lease had expired and the lock was lost.
func (s *lease) Release(ctx context.Context) error {
	s.l.op()
	resp, err := s.l.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(s.key), "=", s.rev)).
		Then(clientv3.OpDelete(s.key)).
		Commit()
	if err != nil {
		return fail(ctx, s.l.wrap("release", err))
	}
	if !resp.Succeeded {
		s.l.counters.Lost.Add(1)
		return fmt.Errorf("etcd %s: %w", s.key, impl.ErrLockLost)
	}
	return nil
}

// Cleanup deletes every key of a cell's namespace, on a connection of its
// own.
func Cleanup(ctx context.Context, s impl.Servers, namespace string) error {
	if namespace == "" || len(s[Need.Role]) == 0 {
		return nil
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: s[Need.Role], DialTimeout: impl.DefaultDialTimeout, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("etcd cleanup: %w", err)
	}
	defer cli.Close()
	for _, prefix := range []string{Root + "/" + namespace + "/", guardPrefix(namespace)} {
		if _, err := cli.Delete(ctx, prefix, clientv3.WithPrefix()); err != nil {
			return fmt.Errorf("etcd cleanup %s: %w", namespace, err)
		}
	}
	return nil
}

// Residue counts the queue keys under a cell's namespace, on a connection
// of its own.
func Residue(ctx context.Context, s impl.Servers, namespace string) (int, error) {
	if len(s[Need.Role]) == 0 {
		return 0, nil
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: s[Need.Role], DialTimeout: impl.DefaultDialTimeout, Logger: zap.NewNop()})
	if err != nil {
		return 0, fmt.Errorf("etcd residue: %w", err)
	}
	defer cli.Close()
	resp, err := cli.Get(ctx, Root+"/"+namespace+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("etcd residue %s: %w", namespace, err)
	}
	return int(resp.Count), nil
}
