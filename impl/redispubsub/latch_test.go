package redispubsub_test

import (
	"context"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/sandboxtest"
)

// A release goes through Redisson 4's unlock latch: the script (which
// reads and sets redisson_unlock_latch:{key}:<id>) and a DEL of the latch
// after it, two commands, and no latch stays behind.
func TestReleaseGoesThroughTheUnlockLatch(t *testing.T) {
	t.Parallel()
	servers := sandboxtest.Start(t, redis.Need)
	l := connect(t, servers, 1)
	ctx := context.Background()
	held, err := l.Acquire(ctx, "latch")
	if err != nil {
		t.Fatal(err)
	}
	before := l.Counters().RoundTrips.Load()
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := l.Counters().RoundTrips.Load() - before; n != 2 {
		t.Errorf("a release sent %d commands, want the script and the latch's DEL", n)
	}
	admin := goredis.NewClient(&goredis.Options{Addr: servers[redis.Need.Role][0]})
	defer admin.Close()
	keys, err := admin.Keys(ctx, "redisson_unlock_latch:*").Result()
	if err != nil || len(keys) != 0 {
		t.Errorf("latches left: %v (%v)", keys, err)
	}
	stats, err := admin.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cmdstat_del:", "cmdstat_evalsha:"} {
		if !strings.Contains(stats, want) {
			t.Errorf("INFO commandstats lacks %s", want)
		}
	}
}
