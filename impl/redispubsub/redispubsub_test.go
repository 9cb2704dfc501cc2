package redispubsub_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/impl/redispubsub"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/sandboxtest"
)

// name is the driver under test.
const name = "redis-pubsub"

func TestConformance(t *testing.T) {
	d, ok := impl.Lookup(name)
	if !ok {
		t.Fatalf("driver %s not registered", name)
	}
	impltest.Run(t, d, sandboxtest.Start(t, d.Needs...), impltest.Options{})
}

// publishCalls reads cmdstat_publish's calls from INFO commandstats: PUBLISH
// run inside a script counts there too.
func publishCalls(t *testing.T, addr string) int64 {
	t.Helper()
	cl := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	defer cl.Close()
	info, err := cl.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_publish:calls=")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		n, err := strconv.ParseInt(calls, 10, 64)
		if err != nil {
			t.Fatalf("cmdstat_publish: %q: %v", line, err)
		}
		return n
	}
	return 0 // no PUBLISH yet
}

// The herd in its exact form: 64 clients queued on one lock, every release
// reaching every waiter still subscribed, 64·63/2 deliveries, each acted
// on; and the server agreeing — its PUBLISH replies sum to the messages
// the clients counted, and it ran one PUBLISH per release. The server must
// be the test's alone (its own sandbox, unless LOCKBENCH_REDIS names one).
func TestBurstHerdMatchesTheoryAndServer(t *testing.T) {
	const n = 64
	servers := sandboxtest.Start(t, redis.Need)
	addr := servers[redis.Need.Role][0]
	burst, _ := engine.LookupScenario("burst")
	before := publishCalls(t, addr)
	res, err := engine.RunCellDetail(context.Background(), engine.CellSpec{
		Impl: name, Scenario: burst, Clients: n, Locks: 1, ConnectParallel: 32,
		ServerKinds: sandbox.Meter{},
		Config:      impl.Config{Servers: servers, Namespace: fmt.Sprintf("%s-%p", t.Name(), t)},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Cell
	const want = n * (n - 1) / 2
	if c.Acquires != n || c.Errors != 0 || c.SafetyViolations != 0 {
		t.Errorf("acquires %d errors %d violations %d", c.Acquires, c.Errors, c.SafetyViolations)
	}
	if c.Settle != "exact" {
		t.Errorf("settle %q, want exact", c.Settle)
	}
	if c.TheoryWakeups == nil || *c.TheoryWakeups != want {
		t.Errorf("theory predicts %v, want %d", c.TheoryWakeups, want)
	}
	if c.ReleaseWakeups != want || c.Wakeups != want {
		t.Errorf("release wake-ups %d, wake-ups %d; want exactly %d", c.ReleaseWakeups, c.Wakeups, want)
	}
	if c.WastedWakeups != want-(n-1) {
		t.Errorf("wasted wake-ups %d, want %d: only n−1 can win", c.WastedWakeups, want-(n-1))
	}
	vec := func(k string) int64 {
		if v := c.Vectors[k]; len(v) == 1 {
			return v[0]
		}
		t.Errorf("vector %s = %v, want one count", k, c.Vectors[k])
		return -1
	}
	if got := vec("publish_receivers"); got != c.Notifications || got != want {
		t.Errorf("PUBLISH reached %d subscribers, clients counted %d notifications; want both %d", got, c.Notifications, want)
	}
	if got := vec("publishes"); got != n {
		t.Errorf("%d releases published, want %d", got, n)
	}
	if got := vec("pttl_waits"); got != 0 {
		t.Errorf("%d PTTL waits in a burst whose every release published", got)
	}
	if got := publishCalls(t, addr) - before; got != n {
		t.Errorf("the server ran %d PUBLISHes (cmdstat_publish), want one per release, %d", got, n)
	}
}

func connect(t *testing.T, servers impl.Servers, client int) impl.Locker {
	t.Helper()
	l, err := redispubsub.New(context.Background(), impl.Config{Servers: servers, Namespace: t.Name(), TTL: 30 * time.Second, Client: client})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// Redisson's lock is re-entrant: the holder's second Acquire counts up,
// and the lock is free only once both leases are released, the last
// release alone publishing.
func TestReentry(t *testing.T) {
	ctx := context.Background()
	servers := sandboxtest.Start(t, redis.Need)
	a, b := connect(t, servers, 1), connect(t, servers, 2)
	outer, err := a.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	inner, err := a.Acquire(ctx, "r")
	if err != nil {
		t.Fatalf("re-entry: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := b.Acquire(short, "r"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("another client's Acquire of a re-entered lock: %v", err)
	}
	if err := inner.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := inner.Release(ctx); err == nil {
		t.Error("a lease released twice said nothing")
	}
	short, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := b.Acquire(short, "r"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the lock was free after one of two releases: %v", err)
	}
	if err := outer.Release(ctx); err != nil {
		t.Fatal(err)
	}
	lease, err := b.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	lease.Release(ctx)
	if v := a.(impl.Distributions).Vectors()["publishes"]; v[0] != 1 {
		t.Errorf("%d publishes for two releases of a re-entered lock, want the last one's only", v[0])
	}
}

// stall keeps the Redis server at addr busy for d, answering no one: a Lua
// script that spins on TIME, written before stall returns on a connection
// of its own that the server has already accepted (a PING answered), so
// that a command sent afterwards on another connection waits behind it.
// The returned func waits for the script to end.
func stall(t *testing.T, addr string, d time.Duration) (wait func()) {
	t.Helper()
	const script = `local s = redis.call("TIME") local t0 = s[1] * 1000000 + s[2]
repeat local n = redis.call("TIME") until n[1] * 1000000 + n[2] - t0 >= tonumber(ARGV[1])
return 1`
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(d + 10*time.Second))
	r := bufio.NewReader(c)
	reply := func(want string) {
		t.Helper()
		if got, err := r.ReadString('\n'); err != nil || got != want {
			c.Close()
			t.Fatalf("stall: reply %q, %v; want %q", got, err, want)
		}
	}
	send := func(args ...string) {
		t.Helper()
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		if _, err := c.Write([]byte(b.String())); err != nil {
			c.Close()
			t.Fatal(err)
		}
	}
	send("PING")
	reply("+PONG\r\n")
	send("EVAL", script, "0", fmt.Sprint(d.Microseconds()))
	return func() {
		t.Helper()
		defer c.Close()
		reply(":1\r\n")
	}
}

// An Acquire of a free lock whose deadline passes after its script reached
// the server but before the reply came back undoes the grant before it
// returns: the hash is gone at once, not after its TTL.
func TestDeadlineMidRequestUndoesTheGrant(t *testing.T) {
	ctx := context.Background()
	servers := sandboxtest.Start(t, redis.Need)
	addr := servers[redis.Need.Role][0]
	l := connect(t, servers, 1)
	wait := stall(t, addr, 300*time.Millisecond)
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err := l.Acquire(dctx, "g")
	wait()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire whose deadline passed mid-request: %v, want ctx.Err()", err)
	}
	admin := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	defer admin.Close()
	if n, err := admin.Exists(ctx, redispubsub.Key(t.Name(), "g")).Result(); err != nil || n != 0 {
		t.Errorf("the abandoned grant's hash is still held (exists %d, %v)", n, err)
	}
	lease, err := connect(t, servers, 2).Acquire(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	lease.Release(ctx)
}
