package redisfair_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/impl/redisfair"
	"github.com/lockbench/lockbench/sandboxtest"
)

// guard bounds every wait for something that should happen at once.
const guard = 10 * time.Second

// nsSeq keeps namespaces apart across -count repetitions and across
// runs against one server (LOCKBENCH_REDIS).
var nsSeq atomic.Int64

func namespace(t *testing.T) string {
	return fmt.Sprintf("%s-%d-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano(), nsSeq.Add(1))
}

// server starts a Redis server for the test (or takes LOCKBENCH_REDIS).
func server(t *testing.T) impl.Servers {
	t.Helper()
	return sandboxtest.Start(t, redis.Need)
}

// admin is a plain client of the server, outside every client's counters.
func admin(t *testing.T, s impl.Servers) *goredis.Client {
	t.Helper()
	cl := goredis.NewClient(&goredis.Options{Addr: s[redis.Need.Role][0], Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { cl.Close() })
	return cl
}

// client connects one client of the fair lock in namespace ns.
func client(t *testing.T, s impl.Servers, ns string, ttl time.Duration, opts map[string]string) *redisfair.Locker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	l, err := redisfair.New(ctx, impl.Config{Servers: s, Namespace: ns, TTL: ttl, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// publishes is the server's count of PUBLISH calls, scripts' included.
func publishes(t *testing.T, cl *goredis.Client) int64 {
	t.Helper()
	return commandStats(t, cl)["publish"].calls
}

// cmdStat is one command's line of INFO commandstats.
type cmdStat struct{ calls, usec int64 }

// commandStats reads INFO commandstats: calls and microseconds by
// command. Commands a script runs have lines of their own, and their
// time is in the script's too.
func commandStats(t *testing.T, cl *goredis.Client) map[string]cmdStat {
	t.Helper()
	info, err := cl.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]cmdStat{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		var st cmdStat
		for _, field := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(field, "=")
			switch k {
			case "calls":
				st.calls, err = strconv.ParseInt(v, 10, 64)
			case "usec":
				st.usec, err = strconv.ParseInt(v, 10, 64)
			}
			if err != nil {
				t.Fatalf("INFO commandstats: %q", line)
			}
		}
		out[name] = st
	}
	return out
}

// serverCPU is the server's CPU time so far (user and system), in
// seconds, from INFO cpu.
func serverCPU(t *testing.T, cl *goredis.Client) float64 {
	t.Helper()
	info, err := cl.Info(context.Background(), "cpu").Result()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("INFO cpu: %q", line)
			}
			total += f
		}
	}
	return total
}

type acquired struct {
	lease impl.Lease
	err   error
}

// startAcquire runs l.Acquire(ctx, name) in a goroutine and returns once
// l is settled on its subscription: queued, subscribed, waiting.
func startAcquire(t *testing.T, ctx context.Context, l *redisfair.Locker, name string) <-chan acquired {
	t.Helper()
	done := make(chan acquired, 1)
	go func() {
		lease, err := l.Acquire(ctx, name)
		done <- acquired{lease, err}
	}()
	deadline := time.Now().Add(guard)
	for !l.Settled() {
		select {
		case r := <-done:
			t.Fatalf("Acquire returned (%v, %v) instead of waiting", r.lease, r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the waiter did not settle within %v", guard)
		}
		time.Sleep(200 * time.Microsecond)
	}
	return done
}

// owner is the owner id of l's n-th Acquire.
func owner(l *redisfair.Locker, n int) string {
	return redisfair.InstanceID(l) + ":" + strconv.Itoa(n)
}
