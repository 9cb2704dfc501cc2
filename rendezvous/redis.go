package rendezvous

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/serverkind"
)

func init() { registerBoard(serverkind.Redis, openRedis) }

// redisBoard keeps its keys under lockbench:shard:<run>:, each with a TTL:
// a passing key lives passingTTL unless put again, the others keepTTL.
type redisBoard struct {
	c      *redis.Client
	prefix string
	addr   string
}

const (
	passingTTL = 10 * time.Second
	keepTTL    = 24 * time.Hour
)

func openRedis(ctx context.Context, addrs []string, run string) (Board, error) {
	c := redis.NewClient(&redis.Options{Addr: addrs[0], PoolSize: 4, DialTimeout: 5 * time.Second})
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("shard: redis %s: %w", addrs[0], err)
	}
	return &redisBoard{c: c, prefix: "lockbench:shard:" + run + ":", addr: addrs[0]}, nil
}

func (b *redisBoard) Put(ctx context.Context, key, value string, passing bool) error {
	ttl := keepTTL
	if passing {
		ttl = passingTTL
	}
	return b.c.Set(ctx, b.prefix+key, value, ttl).Err()
}

func (b *redisBoard) Get(ctx context.Context, key string) (string, bool, error) {
	v, err := b.c.Get(ctx, b.prefix+key).Result()
	if err == redis.Nil {
		return "", false, nil
	}
	return v, err == nil, err
}

// Clock is Redis TIME: seconds and microseconds.
func (b *redisBoard) Clock(ctx context.Context) (time.Time, time.Duration, error) {
	t, err := b.c.Time(ctx).Result()
	return t, time.Microsecond, err
}

func (b *redisBoard) Close() error   { return b.c.Close() }
func (b *redisBoard) Kind() string   { return serverkind.Redis }
func (b *redisBoard) String() string { return "redis " + b.addr }
