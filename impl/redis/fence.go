package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
)

// Fence opens a fencing counter for lock on the first server of addrs: an
// INCR on a key beside the lock's (Key(namespace, lock) + ":fence"). It is
// Need's impl.FenceFunc. Used for Redlock, the counter lives on the first
// master alone: Redlock itself offers no token, and a counter on one
// master is what its users are told to add.
func Fence(ctx context.Context, cfg impl.Config, addrs []string, lock string) (impl.FenceCounter, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("redis: fencing counter for %s: no server address", lock)
	}
	var c impl.Counters // its round trips are the resource's, not the lock's
	cl, err := Dial(ctx, addrs[0], cfg, &c)
	if err != nil {
		return nil, fmt.Errorf("redis: fencing counter: %w", err)
	}
	return &fence{cl: cl, key: Key(cfg.Namespace, lock) + ":fence"}, nil
}

type fence struct {
	cl  *goredis.Client
	key string
}

func (f *fence) Next(ctx context.Context) (uint64, error) {
	n, err := f.cl.Incr(ctx, f.key).Uint64()
	if err != nil {
		return 0, fmt.Errorf("redis: fencing counter %s: %w", f.key, err)
	}
	return n, nil
}

func (f *fence) Close() error { return f.cl.Close() }
