package impltest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// Helpers for tests of the Redis-family drivers that must catch a request
// in flight when its deadline passes: a server kept busy, and a context
// whose deadline comes before its Done.

// StallFor is how long a deadline test keeps a server busy. It must outlast
// a starved test goroutine's way from the stall to its request (or the
// request finds the server free), and end well within redis.CleanupTimeout
// (1s) of the request's deadline, or the undo, which waits behind the
// stall and then needs a new connection under -race on a loaded machine,
// is cut short. The second margin is the one seen to be tight.
const StallFor = 300 * time.Millisecond

// Stall keeps every Redis server at addrs busy for d, answering no one: a
// Lua script that spins on TIME (DEBUG SLEEP is disabled by default). The
// scripts are sent, each on a connection of its own that the server has
// already accepted (a PING answered), and given a moment to start before
// Stall returns, so that a command sent afterwards on another connection
// reaches the server behind its script and waits. The returned func waits
// for every script to end.
func Stall(t testing.TB, addrs []string, d time.Duration) (wait func()) {
	t.Helper()
	const script = `local s = redis.call("TIME") local t0 = s[1] * 1000000 + s[2]
repeat local n = redis.call("TIME") until n[1] * 1000000 + n[2] - t0 >= tonumber(ARGV[1])
return 1`
	var waits []func()
	for _, addr := range addrs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(d + 10*time.Second))
		r := bufio.NewReader(c)
		reply := func(want string) {
			t.Helper()
			if got, err := r.ReadString('\n'); err != nil || got != want {
				t.Fatalf("impltest: stall %s: reply %q, %v; want %q", addr, got, err, want)
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
				t.Fatal(err)
			}
		}
		send("PING")
		reply("+PONG\r\n")
		send("EVAL", script, "0", fmt.Sprint(d.Microseconds()))
		waits = append(waits, func() { reply(":1\r\n") })
	}
	// Let the servers start the scripts: a request that arrives while one
	// runs waits, whichever order the server would read the two in.
	time.Sleep(10 * time.Millisecond)
	return func() {
		t.Helper()
		for _, w := range waits {
			w()
		}
	}
}

// lagging is a context whose deadline comes lag before its Done channel
// closes. A real context's timer runs on a goroutine of its own, so its
// Done may close a little after the deadline that go-redis has already
// given the sockets; lagging stretches that little to lag, so that
// requests timing out on the deadline always find ctx.Err() still nil, as
// they sometimes do in practice.
type lagging struct {
	context.Context
	deadline time.Time
}

func (c lagging) Deadline() (time.Time, bool) { return c.deadline, true }

func LaggingDeadline(d, lag time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), d+lag)
	return lagging{ctx, time.Now().Add(d)}, cancel
}
