package faults

import (
	"context"
	"fmt"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
)

// resource is the shared thing a lock protects, kept in process: it
// records every write with the writer's fencing token. A fenced resource
// rejects a write whose token is lower than the highest it has accepted,
// as the storage service in Kleppmann's fencing scheme does; an unfenced
// one takes every write.
type resource struct {
	fenced bool

	mu      sync.Mutex
	highest uint64
	writes  []write
}

type write struct {
	client   int
	token    uint64
	accepted bool
}

// Write offers a write and says whether the resource took it.
func (r *resource) Write(client int, token uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	ok := !r.fenced || token >= r.highest
	if ok {
		r.highest = max(r.highest, token)
	}
	r.writes = append(r.writes, write{client: client, token: token, accepted: ok})
	return ok
}

// fencer hands out fencing tokens for locks that have none of their own
// (the Redis locks): INCR on a counter key beside the lock's key, called by
// the holder right after Acquire returned.
//
// That is a second round trip, not part of the grant, so a holder that
// stalls between the two could draw a token above its successor's; the
// pause scenario stalls after both. For Redlock the counter lives on the
// first master alone — Redlock itself offers no token, and a counter on one
// master is what its users are told to add.
type fencer struct {
	cl  *goredis.Client
	key string
}

func newFencer(ctx context.Context, addr string, cfg impl.Config, lock string) (*fencer, error) {
	var c impl.Counters // its round trips are the resource's, not the lock's
	cl, err := redis.Dial(ctx, addr, cfg, &c)
	if err != nil {
		return nil, fmt.Errorf("faults: fencing counter: %w", err)
	}
	return &fencer{cl: cl, key: redis.Key(cfg.Namespace, lock) + ":fence"}, nil
}

// Next draws the next token.
func (f *fencer) Next(ctx context.Context) (uint64, error) {
	n, err := f.cl.Incr(ctx, f.key).Uint64()
	if err != nil {
		return 0, fmt.Errorf("faults: fencing counter %s: %w", f.key, err)
	}
	return n, nil
}

func (f *fencer) Close() error { return f.cl.Close() }
