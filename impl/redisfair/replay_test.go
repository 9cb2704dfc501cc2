package redisfair

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/sandboxtest"
)

// A release script sent again with the same request id, before its latch
// is deleted, answers as the first did and changes nothing: a re-entry is
// not undone twice, and the head waiter, who took the lock after the first
// release, neither loses it nor is told a second time.
func TestReplayedReleaseAnswersAsTheFirst(t *testing.T) {
	t.Parallel()
	servers := sandboxtest.Start(t, redis.Need)
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: servers[redis.Need.Role][0]})
	defer c.Close()
	lock, queue, timeouts, prefix := "replay", "replay:queue", "replay:timeout", "replay:channel"
	sub := c.Subscribe(ctx, prefix+":w")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	release := func(latch, owner string) int64 {
		t.Helper()
		n, err := releaseScript.Run(ctx, c, []string{lock, queue, timeouts, prefix, latch}, unlockMessage, 30000,
			owner, time.Now().UnixMilli(), redis.UnlockLatchTTL.Milliseconds(), "publish").Int64()
		if err != nil {
			t.Fatalf("release: %v", err)
		}
		return n
	}

	c.HSet(ctx, lock, "a", 2)
	latch := redis.UnlockLatch(lock)
	if first, again := release(latch, "a"), release(latch, "a"); first != 0 || again != 0 {
		t.Errorf("re-entry: answers %d then %d, want 0 (still held) both times", first, again)
	}
	if n, _ := c.HGet(ctx, lock, "a").Int(); n != 1 {
		t.Errorf("re-entry: count %d after a release and its replay, want 1", n)
	}

	// w waits at the head of the queue; the release tells it, it takes
	// the lock, and then the replay comes.
	c.RPush(ctx, queue, "w")
	c.ZAdd(ctx, timeouts, goredis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: "w"})
	latch = redis.UnlockLatch(lock)
	first := release(latch, "a")
	c.LPop(ctx, queue)
	c.ZRem(ctx, timeouts, "w")
	c.HSet(ctx, lock, "w", 1)
	if again := release(latch, "a"); first != 1 || again != 1 {
		t.Errorf("last entry: answers %d then %d, want 1 (released) both times", first, again)
	}
	if held, _ := c.HExists(ctx, lock, "w").Result(); !held {
		t.Error("the replay released the lock w took after the first release")
	}
	got := 0
	for {
		m, err := sub.ReceiveTimeout(ctx, 300*time.Millisecond)
		if err != nil {
			break
		}
		if _, ok := m.(*goredis.Message); ok {
			got++
		}
	}
	if got != 1 {
		t.Errorf("w was told %d times, want once: the replay announced a release again", got)
	}
}
