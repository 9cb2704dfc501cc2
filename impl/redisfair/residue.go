package redisfair

import (
	"context"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
)

// Residue counts the lock hashes, queues and timeout sets a cell left
// under its namespace on the servers of the lock's roles (every master of
// a cluster).
func Residue(ctx context.Context, s impl.Servers, namespace string) (int, error) {
	addrs, err := redis.ServerAddrs(ctx, s)
	if err != nil {
		return 0, err
	}
	ns := redis.GlobEscape(namespace)
	return redis.CountKeys(ctx, addrs, Key(ns, "*"), QueueKey(ns, "*"), TimeoutKey(ns, "*"))
}
