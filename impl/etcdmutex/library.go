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
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// ClientModule is the module whose concurrency.Mutex the etcd row calls.
const ClientModule = "go.etcd.io/etcd/client/v3"

func init() {
	impl.Register(impl.Driver{
		Name: "etcd",
		Description: "etcd's concurrency.Mutex as its docs show (a Session per client, NewMutex, Lock, Unlock); " +
			"its waiter watches from a past revision, so a hand-off waits for the server's 100 ms resync of unsynced watches",
		Library: ClientModule,
		Needs:   []impl.Need{Need},
		Caps:    impl.LeaseSession | impl.Fencing,
		Theory:  &result.WatchPredecessor,
		Wait:    func(impl.Config) string { return ResyncWait },
		New:     func(ctx context.Context, cfg impl.Config) (impl.Locker, error) { return NewMutexLocker(ctx, cfg) },
		Cleanup: Cleanup,
		Residue: Residue,
	})
}

// ResyncWait is what the library's waiter waits for. Mutex.Lock watches
// its predecessor from the revision of its own Get (waitDeletes in
// client/v3/concurrency/key.go), a revision already past when the watch
// reaches the server, which files such a watch as unsynced and catches
// unsynced watches up only every 100 ms (watchResyncPeriod in
// server/storage/mvcc/watchable_store.go, a constant no flag changes):
// shipped defaults on both sides.
const ResyncWait = "the server's next catch-up of unsynced watches, up to 100 ms later (etcd's watchResyncPeriod: the library watches from a past revision)"

// MutexLocker is one client of the etcd row: its own connection and one
// concurrency.Session, on which each Acquire makes a concurrency.Mutex and
// calls Lock, and each Release calls Unlock. Nothing of the lock is done
// here; the counters are read off the client's gRPC connection.
type MutexLocker struct {
	cli      *clientv3.Client
	cfg      impl.Config
	sess     *concurrency.Session
	counters impl.Counters
	closed   atomic.Bool
	watch    watchState
}

// watchState is what the connection shows of the library's wait: Lock
// is running, every watch it asked for was confirmed by the server, and
// no deletion reached the connection since the last one was asked for.
type watchState struct {
	locking atomic.Bool
	asked   atomic.Int64 // watch create requests sent
	created atomic.Int64 // ... confirmed by the server
	woken   atomic.Bool  // a deletion arrived after the last request
	past    atomic.Int64 // ... of them starting at a past revision (unsynced)
}

// NewMutexLocker connects to cfg.Servers' etcd endpoints and opens the
// client's session (concurrency.NewSession, its TTL the session timeout),
// or returns an error wrapping impl.ErrUnreachable within cfg.DialTimeout.
func NewMutexLocker(ctx context.Context, cfg impl.Config) (*MutexLocker, error) {
	cfg = cfg.WithDefaults()
	addrs := cfg.Servers[Need.Role]
	if len(addrs) == 0 {
		return nil, errors.New("etcd: no server address")
	}
	l := &MutexLocker{cfg: cfg}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   addrs,
		DialTimeout: cfg.DialTimeout,
		Logger:      zap.NewNop(),
		DialOptions: []grpc.DialOption{
			grpc.WithChainUnaryInterceptor(countCalls(&l.counters)),
			grpc.WithChainStreamInterceptor(watchTraffic(&l.counters, &l.watch)),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("etcd %s: %w", strings.Join(addrs, ","), err)
	}
	sess, err := openSession(ctx, cli, cfg)
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcd %s: %w", strings.Join(addrs, ","), err)
	}
	l.cli = cli
	l.watchSession(sess)
	return l, nil
}

// watchSession makes s the client's session and counts its end in
// SessionLost unless Close ended it.
func (l *MutexLocker) watchSession(s *concurrency.Session) {
	l.sess = s
	go func() {
		<-s.Done()
		if !l.closed.Load() {
			l.counters.SessionLost.Add(1)
		}
	}()
}

// openSession calls concurrency.NewSession as its docs show, with the
// session timeout as its TTL. NewSession takes no deadline (its lease
// grant waits on the client's own context), so the wait is bounded here:
// past cfg.DialTimeout the caller closes the client, which ends the grant.
func openSession(ctx context.Context, cli *clientv3.Client, cfg impl.Config) (*concurrency.Session, error) {
	type opened struct {
		s   *concurrency.Session
		err error
	}
	done := make(chan opened, 1)
	go func() {
		s, err := concurrency.NewSession(cli, concurrency.WithTTL(int(TTL(cfg.SessionTimeout))))
		done <- opened{s, err}
	}()
	t := time.NewTimer(cfg.DialTimeout)
	defer t.Stop()
	select {
	case o := <-done:
		if o.err != nil {
			return nil, wrapStatus("session", o.err)
		}
		return o.s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, fmt.Errorf("%w: no session within %v", impl.ErrUnreachable, cfg.DialTimeout)
	}
}

// countCalls counts every unary request the client library sends: the
// mutex's transactions, gets and deletes, and the session's lease grant.
func countCalls(c *impl.Counters) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		c.RoundTrips.Add(1)
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}

// watchTraffic counts, on the connection's watch streams, each watch the
// library opens (a round trip and a wait begun) and each event the server
// sends (a notification; a deletion is a wake-up, since the mutex's
// waiter returns from its wait on the first one).
func watchTraffic(c *impl.Counters, w *watchState) grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
		streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		cs, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil || method != watchMethod {
			return cs, err
		}
		return &watchStream{ClientStream: cs, c: c, w: w}, nil
	}
}

type watchStream struct {
	grpc.ClientStream
	c *impl.Counters
	w *watchState
}

func (s *watchStream) SendMsg(m any) error {
	if r, ok := m.(*pb.WatchRequest); ok && r.GetCreateRequest() != nil {
		s.c.RoundTrips.Add(1)
		s.c.Retries.Add(1)
		s.w.woken.Store(false)
		s.w.asked.Add(1)
		if r.GetCreateRequest().StartRevision > 0 {
			s.w.past.Add(1)
		}
	}
	return s.ClientStream.SendMsg(m)
}

func (s *watchStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if r, ok := m.(*pb.WatchResponse); ok && err == nil {
		if r.Created {
			s.w.created.Add(1)
		}
		s.c.Notifications.Add(int64(len(r.Events)))
		for _, ev := range r.Events {
			if ev.Type == mvccpb.DELETE {
				s.w.woken.Store(true)
				s.c.Wakeups.Add(1)
				s.c.ReleaseWakeups.Add(1)
			}
		}
	}
	return err
}

// Counters returns this client's counters.
func (l *MutexLocker) Counters() *impl.Counters { return &l.counters }

// Settled reports whether Lock waits on watches the server confirmed with
// no deletion received since the last was asked for. The server confirms
// an unsynced watch before it has caught it up, so a deletion between the
// library's read and its watch may still be on its way: then the count
// comes out right, only later (at the next resync tick).
func (l *MutexLocker) Settled() bool {
	w := &l.watch
	asked := w.asked.Load()
	return w.locking.Load() && asked > 0 && w.created.Load() == asked && !w.woken.Load()
}

// Acquire makes a concurrency.Mutex for name on the client's session and
// calls its Lock. Lock deletes its key itself when ctx ends the wait.
func (l *MutexLocker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	select {
	case <-l.sess.Done():
		// The session ended under the client (counted in SessionLost): a
		// user makes a new one, and so does the client here.
		s, err := openSession(ctx, l.cli, l.cfg)
		if err != nil {
			return nil, fail(ctx, err)
		}
		l.watchSession(s)
	default:
	}
	m := concurrency.NewMutex(l.sess, Root+"/"+l.cfg.Namespace+"/"+name)
	l.watch.woken.Store(true) // no watch asked for in this Lock yet
	l.watch.locking.Store(true)
	err := m.Lock(ctx)
	l.watch.locking.Store(false)
	if err != nil {
		if errors.Is(err, concurrency.ErrSessionExpired) {
			return nil, fmt.Errorf("etcd lock %s: %w: %w", name, impl.ErrSessionLost, err)
		}
		return nil, fail(ctx, wrapStatus("lock "+name, err))
	}
	return &mutexLease{m: m}, nil
}

// Close ends the session (revoking its lease, so its keys go at once) and
// closes the connection.
func (l *MutexLocker) Close() error {
	l.closed.Store(true)
	// Session.Close revokes the lease within the session's TTL; an
	// unreachable server costs that long at most, and the lease ends by
	// itself.
	l.sess.Close()
	if err := l.cli.Close(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("etcd close: %w", err)
	}
	return nil
}

type mutexLease struct{ m *concurrency.Mutex }

// Fence returns the revision at which the grant was read (Mutex.Header):
// each grant reads after the previous holder's key was deleted, so the
// revisions grow in grant order.
func (s *mutexLease) Fence() (uint64, bool) { return uint64(s.m.Header().Revision), true }

// Release calls Unlock. concurrency.Mutex deletes its key whether or not
// it still holds the lock, so a lost lease is not told apart here.
func (s *mutexLease) Release(ctx context.Context) error {
	if err := s.m.Unlock(ctx); err != nil {
		return fail(ctx, wrapStatus("unlock", err))
	}
	return nil
}
