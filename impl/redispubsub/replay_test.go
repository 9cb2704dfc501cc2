package redispubsub

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/sandboxtest"
)

// A release script sent again with the same request id, before its latch
// is deleted — Redisson's retry of an unlock whose reply was lost —
// answers as the first did and changes nothing: a re-entry is not undone
// twice, and a lock another owner took since is neither released nor
// announced again.
func TestReplayedReleaseAnswersAsTheFirst(t *testing.T) {
	t.Parallel()
	servers := sandboxtest.Start(t, redis.Need)
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: servers[redis.Need.Role][0]})
	defer c.Close()
	lock, ch := "replay", channelPrefix+"{replay}"
	sub := c.Subscribe(ctx, ch)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	release := func(latch, owner string) []any {
		t.Helper()
		v, err := releaseScript.Run(ctx, c, []string{lock, ch, latch}, unlockMessage, 30000, owner,
			redis.UnlockLatchTTL.Milliseconds(), "publish").Result()
		if err != nil {
			t.Fatalf("release: %v", err)
		}
		return v.([]any)
	}

	// A re-entered hold: the first release undoes one entry, its replay none.
	c.HSet(ctx, lock, "a", 2)
	latch := redis.UnlockLatch(lock)
	first, again := release(latch, "a"), release(latch, "a")
	if first[0] != int64(0) || again[0] != int64(0) {
		t.Errorf("re-entry: answers %v then %v, want 0 (still held) both times", first, again)
	}
	if n, _ := c.HGet(ctx, lock, "a").Int(); n != 1 {
		t.Errorf("re-entry: count %d after a release and its replay, want 1", n)
	}

	// The last entry: freed and announced once; b takes the lock; the
	// replay answers "freed" again and leaves b's hold and the channel alone.
	latch = redis.UnlockLatch(lock)
	first = release(latch, "a")
	c.HSet(ctx, lock, "b", 1)
	again = release(latch, "a")
	if first[0] != int64(1) || first[1] != int64(1) || again[0] != int64(1) || again[1] != int64(0) {
		t.Errorf("last entry: answers %v then %v, want [1 1] (freed, one receiver) then [1 0] (freed, nothing sent)", first, again)
	}
	if held, _ := c.HExists(ctx, lock, "b").Result(); !held {
		t.Error("the replay released the lock b took after the first release")
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
		t.Errorf("%d unlock messages, want 1: the replay announced a release again", got)
	}
}
