package zkconn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/impl/zkconn"
	"github.com/lockbench/lockbench/sandboxtest"
)

// Dial sizes a session's receive buffer, which is also the largest reply
// it accepts, by the cell's client count: a node bigger than a small
// cell's buffer cannot be read, one within a large cell's can, and with
// the count unknown (a cleanup's connection) nothing is refused.
func TestDialSizesTheReceiveBufferByClients(t *testing.T) {
	servers := sandboxtest.Start(t, zkconn.Ensemble)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dial := func(clients int) *gozk.Conn {
		t.Helper()
		var c impl.Counters
		conn, err := zkconn.Dial(ctx, impl.Config{Servers: servers, Clients: clients}, &c, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(conn.Close)
		return conn
	}

	const size = 200 << 10 // above 64 KiB, the smallest buffer; below 1.5 MiB
	p := zkconn.Path("zkconn-buffers", "big")
	// Dial's send buffer fits a path, not this node: the writer is the
	// library's own client.
	writer, _, err := gozk.Connect(servers[zkconn.Ensemble.Role], 5*time.Second, gozk.WithLogger(silent{}))
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	var c impl.Counters
	if err := zkconn.EnsurePath(writer, p, &c); err != nil {
		t.Fatal(err)
	}
	if got := c.ZKOps.Load(); got != 3 { // /lockbench, the namespace, the node
		t.Errorf("EnsurePath counted %d requests, want 3", got)
	}
	if _, err := writer.Set(p, make([]byte, size), -1); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		clients int
		fits    bool
	}{
		{clients: 0, fits: true},      // unbounded
		{clients: 4, fits: false},     // 64 KiB
		{clients: 20_000, fits: true}, // 1.5 MiB
	} {
		conn := dial(tc.clients)
		data, _, err := conn.Get(p)
		switch {
		case tc.fits && (err != nil || len(data) != size):
			t.Errorf("%d clients: read %d bytes, err %v; want %d", tc.clients, len(data), err, size)
		case !tc.fits && err == nil:
			t.Errorf("%d clients: a %d-byte reply was accepted, want it refused", tc.clients, size)
		}
	}
}

type silent struct{}

func (silent) Printf(string, ...any) {}

// Wrap classes the errors a lock reports by what the engine does with
// them: a session gone is session_lost, no server unreachable.
func TestWrapClassesErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want error
	}{
		{gozk.ErrSessionExpired, impl.ErrSessionLost},
		{gozk.ErrSessionMoved, impl.ErrSessionLost},
		{gozk.ErrNoServer, impl.ErrUnreachable},
	} {
		got := zkconn.Wrap("op", tc.err)
		if !errors.Is(got, tc.want) || !errors.Is(got, tc.err) {
			t.Errorf("Wrap(%v) = %v, want it to wrap %v and the cause", tc.err, got, tc.want)
		}
	}
	if got := zkconn.Wrap("op", gozk.ErrNodeExists); errors.Is(got, impl.ErrSessionLost) || errors.Is(got, impl.ErrUnreachable) {
		t.Errorf("Wrap(ErrNodeExists) = %v, classed as a lost session or unreachable", got)
	}
}

// Dial gives up on an address where no server answers within
// DialTimeout, with impl.ErrUnreachable.
func TestDialUnreachable(t *testing.T) {
	var c impl.Counters
	_, err := zkconn.Dial(context.Background(), impl.Config{
		Servers: impl.Servers{zkconn.Ensemble.Role: {"127.0.0.1:1"}}, DialTimeout: 500 * time.Millisecond,
	}, &c, nil)
	if !errors.Is(err, impl.ErrUnreachable) {
		t.Fatalf("Dial to a closed port: %v, want impl.ErrUnreachable", err)
	}
}

// The guarded register's conditional writes keep the rules every server
// kind's must.
func TestGuard(t *testing.T) {
	servers := sandboxtest.Start(t, zkconn.Ensemble)
	impltest.Register(t, zkconn.Guard, servers[zkconn.Ensemble.Role])
}
