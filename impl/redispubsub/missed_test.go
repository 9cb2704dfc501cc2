package redispubsub

import (
	"context"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/sandboxtest"
)

func client(t *testing.T, servers impl.Servers, ttl time.Duration, id int) *Locker {
	t.Helper()
	l, err := New(context.Background(), impl.Config{Servers: servers, Namespace: t.Name(), TTL: ttl, Client: id})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.(*Locker)
}

type acquired struct {
	lease impl.Lease
	err   error
	at    time.Time
}

// waitFor starts l's Acquire of name and returns once it is waiting on its
// subscription.
func waitFor(t *testing.T, l *Locker, name string) <-chan acquired {
	t.Helper()
	done := make(chan acquired, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		lease, err := l.Acquire(ctx, name)
		done <- acquired{lease, err, time.Now()}
	}()
	for deadline := time.Now().Add(5 * time.Second); !l.Settled(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the waiter did not settle")
		}
	}
	return done
}

func numsub(t *testing.T, admin *goredis.Client, ch string) int64 {
	t.Helper()
	m, err := admin.PubSubNumSub(context.Background(), ch).Result()
	if err != nil {
		t.Fatal(err)
	}
	return m[ch]
}

// A waiter that misses the release — its subscription gone when the
// holder PUBLISHes — waits out the PTTL the acquire script gave it, counts
// that wait, and gets the lock then (Redisson issue #1763). Two ways to
// lose the message: the subscription is dropped (UNSUBSCRIBE behind the
// driver's back), or the subscription connection is killed in the same
// transaction as the release, so that go-redis's resubscription comes too
// late; the waiter must then still be woken by later releases.
func TestMissedMessageFallsBackToPTTL(t *testing.T) {
	for _, how := range []string{"unsubscribed", "killed"} {
		t.Run(how, func(t *testing.T) { missedMessage(t, how) })
	}
}

func missedMessage(t *testing.T, how string) {
	const ttl = 600 * time.Millisecond
	ctx := context.Background()
	servers := sandboxtest.Start(t, redis.Need)
	admin := goredis.NewClient(&goredis.Options{Addr: servers[redis.Need.Role][0], Protocol: 2, DisableIdentity: true})
	defer admin.Close()
	a, b := client(t, servers, ttl, 1), client(t, servers, 10*time.Second, 2)
	held, err := a.Acquire(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	done := waitFor(t, b, "m")
	key, ch, _ := b.names("m")
	if n := numsub(t, admin, ch); n != 1 {
		t.Fatalf("%d subscribers while b waits, want 1", n)
	}
	var released time.Time
	switch how {
	case "unsubscribed":
		if err := b.cur.Unsubscribe(ctx, ch); err != nil {
			t.Fatal(err)
		}
		for numsub(t, admin, ch) != 0 {
			time.Sleep(time.Millisecond)
		}
		released = time.Now()
		if err := held.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if v := a.Vectors()["publish_receivers"]; v[0] != 0 {
			t.Fatalf("the release reached %d subscribers, want none", v[0])
		}
	case "killed":
		released = time.Now()
		killAndRelease(t, admin, key, ch, a.id)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("the waiter that missed the release: %v", r.err)
	}
	waited := r.at.Sub(released)
	t.Logf("%s: the waiter got the lock %v after the release (PTTL wait %v)", how, waited, longestPTTLWait(b))
	if n := b.Vectors()["pttl_waits"][0]; n != 1 {
		t.Errorf("%d PTTL waits counted, want 1", n)
	}
	if n := b.counters.Notifications.Load(); n != 0 {
		t.Errorf("%d notifications for a release that reached no one", n)
	}
	if waited < ttl/3 {
		t.Errorf("got the lock %v after a missed release: it did not wait out the PTTL (lease %v)", waited, ttl)
	}
	if err := r.lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// Its subscription works again: a later release wakes it at once.
	c := client(t, servers, 10*time.Second, 3)
	held, err = c.Acquire(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	done = waitFor(t, b, "m")
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if r = <-done; r.err != nil {
		t.Fatal(r.err)
	}
	if w := b.counters.ReleaseWakeups.Load(); w != 1 || b.Vectors()["pttl_waits"][0] != 1 {
		t.Errorf("after the missed one, a release gave %d wake-ups and %d PTTL waits in all, want 1 and 1", w, b.Vectors()["pttl_waits"][0])
	}
	r.lease.Release(ctx)
}

// killAndRelease kills the one subscribed connection (the waiter's) and
// runs the holder's release in one transaction: the PUBLISH reaches no
// one, and the waiter's resubscription comes after it.
func killAndRelease(t *testing.T, admin *goredis.Client, key, ch, holder string) {
	t.Helper()
	ctx := context.Background()
	list, err := admin.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for line := range strings.SplitSeq(strings.TrimSpace(list), "\n") {
		if strings.Contains(line, " sub=1 ") {
			id, _, _ := strings.Cut(strings.TrimPrefix(line, "id="), " ")
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("%d subscribed connections, want the waiter's alone: %q", len(ids), list)
	}
	var rel *goredis.Cmd
	_, err = admin.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.Do(ctx, "client", "kill", "id", ids[0])
		rel = p.Eval(ctx, releaseSrc, []string{key, ch, "latch:" + key}, unlockMessage, 1000, holder, 1000, "publish")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := rel.Slice(); err != nil || len(v) != 2 || v[0] != int64(1) || v[1] != int64(0) {
		t.Fatalf("release in the transaction: %v, %v; want [1 0] (freed, published to no one)", v, err)
	}
}

// longestPTTLWait is the longest PTTL wait l recorded.
func longestPTTLWait(l *Locker) time.Duration {
	return time.Duration(l.Histograms()["pttl_wait_ms"].Max()) * time.Microsecond
}
