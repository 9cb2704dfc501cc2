package redispubsub

import (
	"context"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
)

// Residue counts the lock hashes a cell left under its namespace on the
// server of the lock's role.
func Residue(ctx context.Context, s impl.Servers, namespace string) (int, error) {
	return redis.CountKeys(ctx, s[redis.SubscribingNeed.Role], Key(redis.GlobEscape(namespace), "*"))
}
