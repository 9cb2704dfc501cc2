// Package zkconn opens the ZooKeeper sessions of every ZooKeeper lock
// (impl/zk's queue recipes, zk-ephemeral, zk-lock): one session per
// client, its buffers sized for the cell, events counted where the
// connection receives them, calls bounded after their context ends, errors
// classed.
package zkconn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// Ensemble is the ZooKeeper ensemble the locks use (--zk, LOCKBENCH_ZK).
var Ensemble = impl.Need{Role: "zk", Kind: serverkind.ZooKeeper, Count: 1, Usage: "ZooKeeper servers of one ensemble, comma-separated"}

// ACL is the open ACL every lock node is created with.
var ACL = gozk.WorldACL(gozk.PermAll)

type silent struct{}

func (silent) Printf(string, ...any) {}

// Dial opens a session to cfg's ZooKeeper ensemble (the Ensemble role)
// and returns once it is established, or an error wrapping
// impl.ErrUnreachable within cfg.DialTimeout. Its buffers are sized for
// cfg.Clients (see recvBuffer). Every event the server sends is counted in
// c.Notifications before any waiter sees it, and every expiry in
// c.SessionLost. opt, if not nil, is one more go-zookeeper option (a
// dialer, say).
func Dial(ctx context.Context, cfg impl.Config, c *impl.Counters, opt func(*gozk.Conn)) (*gozk.Conn, error) {
	cfg = cfg.WithDefaults()
	addrs := cfg.Servers[Ensemble.Role]
	if len(addrs) == 0 {
		return nil, errors.New("zk: no server address")
	}
	if opt == nil {
		opt = func(*gozk.Conn) {}
	}
	ready := make(chan struct{}, 1)
	onEvent := func(ev gozk.Event) {
		switch ev.Type {
		case gozk.EventNodeCreated, gozk.EventNodeDeleted, gozk.EventNodeDataChanged, gozk.EventNodeChildrenChanged:
			// Only events the server sent; EventNotWatching is made up by
			// the client library when a session ends.
			c.Notifications.Add(1)
		case gozk.EventSession:
			switch ev.State {
			case gozk.StateHasSession:
				select {
				case ready <- struct{}{}:
				default:
				}
			case gozk.StateExpired:
				c.SessionLost.Add(1)
			}
		}
	}
	conn, _, err := gozk.Connect(addrs, cfg.SessionTimeout,
		gozk.WithLogger(silent{}), gozk.WithEventCallback(onEvent),
		gozk.WithMaxConnBufferSize(sendBuffer), gozk.WithMaxBufferSize(recvBuffer(cfg.Clients)), opt)
	if err != nil {
		return nil, fmt.Errorf("zk %s: %w", strings.Join(addrs, ","), err)
	}
	t := time.NewTimer(cfg.DialTimeout)
	defer t.Stop()
	select {
	case <-ready:
		return conn, nil
	case <-t.C:
		err = fmt.Errorf("zk %s: %w: no session within %v", strings.Join(addrs, ","), impl.ErrUnreachable, cfg.DialTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	conn.Close()
	return nil, err
}

// go-zookeeper gives every connection a send and a receive buffer of
// 1.5 MiB each, made up front: 6 GB for a burst of 2,000 clients. What a
// client sends is a path; the largest reply it reads is a lock's queue,
// one name (nodeNameBytes with its length) per client at most — impl/zk's
// n-<32 hex>-<10 digits> and zk.Lock's _c_<32 hex>-lock-<10 digits> both
// fit. So the send buffer is sendBuffer, and the receive buffer — also the
// largest reply the client accepts — is sized for the cell's clients,
// doubled for nodes of sessions not yet expired, and unbounded (the
// library's default) when the count is unknown.
const (
	sendBuffer    = 64 << 10
	nodeNameBytes = 64
	minRecvBuffer = 64 << 10
	maxRecvBuffer = 1536 << 10
)

// recvBuffer is the receive buffer for a cell of clients; 0 leaves it
// unbounded.
func recvBuffer(clients int) int {
	if clients <= 0 {
		return 0
	}
	return min(max(2*clients*nodeNameBytes, minRecvBuffer), maxRecvBuffer)
}

// AbandonAfter is how long a ZooKeeper call may outlive its context before
// the client gives it up. go-zookeeper's calls take no context: against a
// server that stopped answering they wait on, so the client's connection
// is closed under them, which ends the call (and the session) at once.
const AbandonAfter = time.Second

// Bound makes the calls on conn until the returned stop is called give up
// AbandonAfter after ctx is done (see AbandonAfter). A context that never
// ends costs nothing.
func Bound(ctx context.Context, conn *gozk.Conn) (stop func()) {
	if ctx.Done() == nil {
		return func() {}
	}
	done := make(chan struct{})
	unregister := context.AfterFunc(ctx, func() {
		t := time.NewTimer(AbandonAfter)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			conn.Close()
		}
	})
	return func() {
		close(done)
		unregister()
	}
}

// Wrap classifies a go-zookeeper error: a session that expired or moved
// wraps impl.ErrSessionLost, no server impl.ErrUnreachable.
func Wrap(what string, err error) error {
	switch {
	case errors.Is(err, gozk.ErrSessionExpired), errors.Is(err, gozk.ErrSessionMoved):
		return fmt.Errorf("zk %s: %w: %w", what, impl.ErrSessionLost, err)
	case errors.Is(err, gozk.ErrNoServer):
		return fmt.Errorf("zk %s: %w: %w", what, impl.ErrUnreachable, err)
	}
	return fmt.Errorf("zk %s: %w", what, err)
}

// EnsurePath creates each level of p that is missing, counting each
// request in c. They are persistent, not containers: a container emptied
// between two grants may be reaped and made again, and its children's
// sequence — impl/zk's fencing token — would start over at 0. The cell's
// Cleanup removes them.
func EnsurePath(conn *gozk.Conn, p string, c *impl.Counters) error {
	cur := ""
	for _, part := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		cur += "/" + part
		Op(c)
		if _, err := conn.Create(cur, nil, 0, ACL); err != nil && !errors.Is(err, gozk.ErrNodeExists) {
			return Wrap("create "+cur, err)
		}
	}
	return nil
}

// Op counts one request sent.
func Op(c *impl.Counters) {
	c.ZKOps.Add(1)
	c.RoundTrips.Add(1)
}

// Root is where every lock of a cell lives: Root/<namespace>/<lock>, the
// layout zk.Cleanup removes.
const Root = "/lockbench"

// Path is the path of lock name in namespace.
func Path(namespace, name string) string { return Root + "/" + namespace + "/" + name }
