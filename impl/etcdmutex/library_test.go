package etcdmutex_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/etcdmutex"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/result"
)

func TestLibraryConformance(t *testing.T) {
	d, ok := impl.Lookup("etcd")
	if !ok {
		t.Fatal("driver etcd not registered")
	}
	impltest.Run(t, d, servers(t), impltest.Options{Leftovers: keys, Skip: map[string]string{
		"abandoned-grant": "concurrency.Mutex.Lock leaves its key queued when ctx ends between the create and its reply " +
			"(tryAcquire returns the error without deleting; the key goes with the session's lease): the library's " +
			"behaviour, which the etcd row keeps; etcd-recipe deletes it",
	}})
}

// The etcd row is etcd's concurrency.Mutex: it names the client module,
// it takes the keys concurrency.Mutex takes (a lock held through the row
// makes the library's own TryLock say ErrLocked, and the library's lock
// blocks the row), and it pays what the library pays: its waiter watches
// from the revision of its read, so the server catches the watch up on its
// 100 ms resync tick and some hand-offs wait for it, where the recipe row
// hands on at round-trip speed. The test fails if the row stops calling
// concurrency.Mutex (a faster recipe would run as fast as etcd-recipe).
func TestEtcdRowIsConcurrencyMutex(t *testing.T) {
	d, _ := impl.Lookup("etcd")
	if d.Library != etcdmutex.ClientModule || d.Recipe != "" {
		t.Fatalf("etcd row says library %q, recipe %q", d.Library, d.Recipe)
	}
	s := servers(t)
	ctx := context.Background()
	ns := fmt.Sprintf("pin-%d", time.Now().UnixNano())
	row, err := etcdmutex.NewMutexLocker(ctx, impl.Config{Servers: s, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	defer row.Close()
	sess := librarySession(t, s)
	m := concurrency.NewMutex(sess, etcdmutex.Root+"/"+ns+"/l")
	held, err := row.Acquire(ctx, "l")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.TryLock(ctx); !errors.Is(err, concurrency.ErrLocked) {
		t.Fatalf("the library's TryLock while the row holds the lock: %v, want ErrLocked", err)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = row.Acquire(wctx, "l")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the row's Acquire while the library holds the lock: %v, want to wait", err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	lib, rec := contended(t, s, "etcd"), contended(t, s, "etcd-recipe")
	if lib.AcquiresPerS*2 > rec.AcquiresPerS {
		t.Errorf("8 clients, hold 0: etcd row %.0f acq/s, recipe %.0f; concurrency.Mutex waits for the resync tick, want the recipe ≥ 2× as fast",
			lib.AcquiresPerS, rec.AcquiresPerS)
	}
	t.Logf("8 clients, hold 0: etcd row %.0f acq/s, hand-off gap mean %.0f µs; recipe %.0f acq/s, %.0f µs",
		lib.AcquiresPerS, lib.HandoffGapUs.Mean, rec.AcquiresPerS, rec.HandoffGapUs.Mean)
}

// librarySession opens a concurrency.Session of the test's own.
func librarySession(t *testing.T, s impl.Servers) *concurrency.Session {
	t.Helper()
	cli := etcdClient(t, s)
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(10))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// contended runs eight clients of impl contending for one lock with no
// hold.
func contended(t *testing.T, s impl.Servers, name string) result.Cell {
	t.Helper()
	hot, _ := engine.LookupScenario("hot")
	res, err := engine.RunCellDetail(context.Background(), engine.CellSpec{
		Impl: name, Scenario: hot, Clients: 8, Locks: 1, Acquires: 80, Warmup: 100 * time.Millisecond,
		Config: impl.Config{Servers: s, Namespace: fmt.Sprintf("gap-%s-%d", name, time.Now().UnixNano())},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Cell
	if c.Errors != 0 || c.SafetyViolations != 0 || c.HandoffGapUs == nil {
		t.Fatalf("%s: errors %v, violations %d, hand-off gap %v", name, c.ErrorsByClass, c.SafetyViolations, c.HandoffGapUs)
	}
	return c
}

// A burst through the etcd row: the lock passes down the queue, each
// waiter woken once by its predecessor's deletion (n−1 to drain n), and the
// server sent exactly the watch events the connections received.
func TestLibraryBurstWakesOnePerRelease(t *testing.T) {
	s := servers(t)
	const n = 16
	burst, _ := engine.LookupScenario("burst")
	res, err := engine.RunCellDetail(context.Background(), engine.CellSpec{
		Impl: "etcd", Scenario: burst, Clients: n, Locks: 1, Hold: time.Millisecond,
		Config: impl.Config{Servers: s, Namespace: fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Cell
	if c.Acquires != n || c.Errors != 0 || c.SafetyViolations != 0 {
		t.Fatalf("acquires %d errors %d (%v) violations %d", c.Acquires, c.Errors, c.ErrorsByClass, c.SafetyViolations)
	}
	if c.ReleaseWakeups != n-1 || c.Notifications != n-1 {
		t.Errorf("release wake-ups %d, notifications %d; want %d", c.ReleaseWakeups, c.Notifications, n-1)
	}
	if ev := c.Server["etcd_debugging_mvcc_events_total"]; ev != c.Notifications {
		t.Errorf("server sent %d watch events, clients received %d", ev, c.Notifications)
	}
}

// etcdClient is a client of the test's own, closed when the test ends.
func etcdClient(t *testing.T, s impl.Servers) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: s[etcdmutex.Need.Role], DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}
