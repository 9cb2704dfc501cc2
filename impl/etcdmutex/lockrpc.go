package etcdmutex

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/server/v3/etcdserver/api/v3lock/v3lockpb"

	"github.com/lockbench/lockbench/impl"
)

// LockRPCModule is the module whose Lock service stubs
// (etcdserver/api/v3lock/v3lockpb) the etcd-lock row calls: etcd's own,
// at the version of the client modules the other etcd rows use.
const LockRPCModule = "go.etcd.io/etcd/server/v3"

func init() {
	impl.Register(impl.Driver{
		Name: "etcd-lock",
		Description: "etcd's Lock RPC (v3lock, the service Jepsen's etcd 3.4.3 analysis locked with): the server runs " +
			"concurrency.Mutex on a lease the client keeps alive, the waiter waits inside the server; the grant's revision as its token",
		Library: LockRPCModule,
		Needs:   []impl.Need{Need},
		Caps:    impl.LeaseSession | impl.Fencing,
		Theory:  &impl.ServerQueue,
		New:     func(ctx context.Context, cfg impl.Config) (impl.Locker, error) { return NewLockRPC(ctx, cfg) },
		Cleanup: Cleanup,
		Residue: Residue,
	})
}

// LockRPC is one client of etcd's Lock service: its own connection and
// its own lease, kept alive by the client (a concurrency.Session, as
// etcdctl keeps one), which every Lock names. The waiting is the
// server's: a Lock call returns once the lock is the client's, so the
// client sees no watch and counts no wake-up.
type LockRPC struct {
	*Locker
	lock v3lockpb.LockClient
	// waiting is the key the server queues for the client while a Lock
	// call waits, and from when (Unix ns); "" and 0 otherwise.
	waitKey  atomic.Pointer[string]
	waitFrom atomic.Int64
	view     *queueView
}

// NewLockRPC connects and grants the client's lease (see New).
func NewLockRPC(ctx context.Context, cfg impl.Config) (*LockRPC, error) {
	l, err := New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &LockRPC{Locker: l, lock: v3lockpb.NewLockClient(l.cli.ActiveConnection()),
		view: viewFor(cfg.Servers[Need.Role], Root+"/"+cfg.Namespace+"/")}, nil
}

// Settled reports whether a Lock call waits in the server's queue: a read
// of the queue sent after the call lists the key the server's mutex put
// for the client's lease behind another. The waiting is the server's, so
// nothing else can be in flight.
func (l *LockRPC) Settled() bool {
	k, from := l.waitKey.Load(), l.waitFrom.Load()
	return k != nil && from != 0 && l.view.Waiting(*k, from)
}

// Acquire calls Lock with the client's lease. When ctx ends the wait, the
// server's mutex deletes the key it queued (concurrency.Mutex.Lock does
// on its way out), so nothing stays queued.
func (l *LockRPC) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	s, err := l.session(ctx)
	if err != nil {
		return nil, fail(ctx, l.wrap("grant", err))
	}
	l.op()
	// The server's concurrency.Mutex queues the key NAME/LEASE (hex).
	key := l.prefix(name) + fmt.Sprintf("%x", int64(s.Lease()))
	l.waitKey.Store(&key)
	l.waitFrom.Store(time.Now().UnixNano())
	resp, err := l.lock.Lock(ctx, &v3lockpb.LockRequest{Name: []byte(strings.TrimSuffix(l.prefix(name), "/")), Lease: int64(s.Lease())})
	l.waitFrom.Store(0)
	l.waitKey.Store(nil)
	if err != nil {
		return nil, fail(ctx, l.wrap("lock "+name, err))
	}
	return &rpcLease{l: l, s: s, key: resp.Key, rev: resp.Header.GetRevision()}, nil
}

type rpcLease struct {
	l   *LockRPC
	s   *session
	key []byte
	rev int64
}

// Fence is the revision the Lock answered at: the server's mutex reads
// the queue after the previous holder's key was deleted, so it grows in
// grant order (the key's revision Jepsen named as the fix).
func (g *rpcLease) Fence() (uint64, bool) { return uint64(g.rev), true }

// Release calls Unlock, which deletes the client's key (gone already if
// its lease ended). The RPC does not say whether the key was still the
// client's; the client knows its lease ended when its keep-alives stopped
// (the session is done), and says the lock was lost then, whether or not
// the server could be reached to unlock.
func (g *rpcLease) Release(ctx context.Context) error {
	lost := false
	select {
	case <-g.s.Done():
		lost = true
	default:
	}
	g.l.op()
	_, err := g.l.lock.Unlock(ctx, &v3lockpb.UnlockRequest{Key: g.key})
	select {
	case <-g.s.Done(): // it may have ended while Unlock was refused
		lost = true
	default:
	}
	if err != nil && !lost {
		return fail(ctx, g.l.wrap("unlock", err))
	}
	if lost {
		g.l.counters.Lost.Add(1)
		return fmt.Errorf("etcd-lock %s: %w: the client's lease ended under it", g.key, impl.ErrLockLost)
	}
	return nil
}
