package impltest

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
)

// RedisKeys returns an Options.Leftovers for drivers that keep a Redis key
// per lock (redis, redlock, redsync): it counts, on every server of role,
// the keys whose name key(namespace, name) would give for some lock name.
// key is the driver's key function (redis.Key), so that the count follows
// the driver's layout rather than a copy of it.
func RedisKeys(role string, key func(namespace, name string) string) func(ctx context.Context, servers impl.Servers, namespace string) (int, error) {
	return func(ctx context.Context, servers impl.Servers, namespace string) (int, error) {
		pattern := key(redis.GlobEscape(namespace), "*")
		total := 0
		for _, addr := range servers[role] {
			n, err := countKeys(ctx, addr, pattern)
			if err != nil {
				return 0, fmt.Errorf("redis %s: SCAN MATCH %s: %w", addr, pattern, err)
			}
			total += n
		}
		return total, nil
	}
}

func countKeys(ctx context.Context, addr, pattern string) (int, error) {
	cl := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	defer cl.Close()
	n := 0
	it := cl.Scan(ctx, 0, pattern, 100).Iterator()
	for it.Next(ctx) {
		n++
	}
	return n, it.Err()
}
