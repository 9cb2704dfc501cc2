package etcdmutex_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/etcdmutex"
	"github.com/lockbench/lockbench/impl/impltest"
)

func TestLockRPCConformance(t *testing.T) {
	d, ok := impl.Lookup("etcd-lock")
	if !ok {
		t.Fatal("driver etcd-lock not registered")
	}
	// The server's Lock runs concurrency.Mutex.Lock for the call, whose
	// tryAcquire leaves the key queued when the call's ctx ends between
	// the create and its reply; the key lives with the client's lease,
	// which the client keeps alive. Two CI runs found 1 key left, one in
	// each check below.
	const serverMutex = "the server's concurrency.Mutex leaves a waiter's key queued when its Lock call is cancelled " +
		"between the create and the reply, and the key lives with the client's lease: etcd's behaviour, which the row " +
		"keeps as users calling the Lock RPC see it"
	impltest.Run(t, d, servers(t), impltest.Options{Skip: map[string]string{
		"cancelled-acquire": serverMutex,
		"abandoned-grant":   serverMutex,
	}})
}

// The etcd-lock row is etcd's Lock service: a lock it holds is the key
// the server's concurrency.Mutex queued under the lock's name, so the
// library's TryLock on the same name finds it held, and the grant's token
// is the revision the server answered at, above the key's creation.
func TestLockRPCRowIsTheServersMutex(t *testing.T) {
	s := servers(t)
	ctx := context.Background()
	ns := fmt.Sprintf("rpc-%d", time.Now().UnixNano())
	row, err := etcdmutex.NewLockRPC(ctx, impl.Config{Servers: s, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	defer row.Close()
	lease, err := row.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: s[etcdmutex.Need.Role], Logger: zap.NewNop(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	sess, err := concurrency.NewSession(cli)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	m := concurrency.NewMutex(sess, etcdmutex.Root+"/"+ns+"/x")
	if err := m.TryLock(ctx); err != concurrency.ErrLocked {
		t.Errorf("the library's TryLock on the row's lock: %v, want ErrLocked", err)
	}
	tok, ok := lease.Fence()
	if !ok || tok == 0 {
		t.Errorf("token %d, %v", tok, ok)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.TryLock(ctx); err != nil {
		t.Errorf("after the row's release the library's TryLock: %v", err)
	}
	m.Unlock(ctx)
	if c := row.Counters(); c.Wakeups.Load() != 0 || c.RoundTrips.Load() < 2 {
		t.Errorf("wake-ups %d (the server waits, not the client), round trips %d", c.Wakeups.Load(), c.RoundTrips.Load())
	}
}
