package redisfair

import (
	"context"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
)

// Residue counts the lock hashes, queues and timeout sets a cell left
// under its namespace on the server of the lock's role.
func Residue(ctx context.Context, s impl.Servers, namespace string) (int, error) {
	ns := redis.GlobEscape(namespace)
	return redis.CountKeys(ctx, s[redis.SubscribingNeed.Role], Key(ns, "*"), QueueKey(ns, "*"), TimeoutKey(ns, "*"))
}
