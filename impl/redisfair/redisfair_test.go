package redisfair_test

import (
	"context"
	"testing"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/impl/redisfair"
	"github.com/lockbench/lockbench/internal/sandboxtest"
)

func TestConformance(t *testing.T) {
	d, ok := impl.Lookup("redis-fair")
	if !ok {
		t.Fatal("driver redis-fair not registered")
	}
	impltest.Run(t, d, sandboxtest.Start(t, d.Needs...), impltest.Options{Leftovers: leftovers})
}

// leftovers counts the lock hashes, queues and timeout sets of namespace.
func leftovers(ctx context.Context, s impl.Servers, namespace string) (int, error) {
	total := 0
	for _, key := range []func(string, string) string{redisfair.Key, redisfair.QueueKey, redisfair.TimeoutKey} {
		n, err := impltest.RedisKeys(redis.Need.Role, key)(ctx, s, namespace)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}
