package redis

import (
	"context"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
)

// The guard's scripts take the keys of a lock's unfenced counter, fenced
// counter and highest token seen, so that each access and its fence check
// are one step on the server. Tokens travel as decimal strings; Lua's
// numbers hold them exactly below 2^53, far above any lock's count.
var (
	guardRead = goredis.NewScript(`
local h = tonumber(redis.call('GET', KEYS[3]) or '0')
local t = tonumber(ARGV[1])
local refused = 0
if t < h then refused = 1 elseif t > h then redis.call('SET', KEYS[3], ARGV[1]) end
return {tonumber(redis.call('GET', KEYS[1]) or '0'), tonumber(redis.call('GET', KEYS[2]) or '0'), refused}`)
	guardWrite = goredis.NewScript(`
local ru, rf = tonumber(ARGV[2]), tonumber(ARGV[3])
local cu = tonumber(redis.call('GET', KEYS[1]) or '0')
redis.call('SET', KEYS[1], ru + 1)
local acc, mf = 0, 0
if ARGV[4] == '1' then
  local h = tonumber(redis.call('GET', KEYS[3]) or '0')
  local t = tonumber(ARGV[1])
  if t >= h then
    local cf = tonumber(redis.call('GET', KEYS[2]) or '0')
    redis.call('SET', KEYS[2], rf + 1)
    if t > h then redis.call('SET', KEYS[3], ARGV[1]) end
    acc, mf = 1, cf - rf
  end
end
return {cu - ru, acc, mf}`)
)

// Guard opens the guarded register (impl.Guard) on the first server of
// addrs: three keys beside each lock's, under one hash tag. It is Need's
// impl.GuardFunc; for Redlock the register lives on the first master, as
// its fencing counter does.
func Guard(ctx context.Context, cfg impl.Config, addrs []string) (impl.Guard, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("redis: guarded register: no server address")
	}
	cfg = cfg.WithDefaults()
	var c impl.Counters // its round trips are the register's, not the lock's
	cl, err := Dial(ctx, addrs[0], cfg, &c)
	if err != nil {
		return nil, fmt.Errorf("redis: guarded register: %w", err)
	}
	for _, s := range []*goredis.Script{guardRead, guardWrite} {
		if err := s.Load(ctx, cl).Err(); err != nil {
			cl.Close()
			return nil, fmt.Errorf("redis: guarded register: load scripts: %w", err)
		}
	}
	return &guard{cl: cl, ns: cfg.Namespace}, nil
}

// ClusterGuard opens the guarded register on a Redis Cluster (ClusterNeed's
// impl.GuardFunc): the same keys and scripts, their one hash tag putting a
// lock's three keys on one master, reached through a cluster client of
// its own.
func ClusterGuard(ctx context.Context, cfg impl.Config, addrs []string) (impl.Guard, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("redis: guarded register: no cluster node address")
	}
	cfg = cfg.WithDefaults()
	var c impl.Counters // its round trips are the register's, not the lock's
	cl := NewClusterClient(addrs, cfg, &c)
	pctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	if err := cl.ForEachMaster(pctx, func(ctx context.Context, m *goredis.Client) error { return m.Ping(ctx).Err() }); err != nil {
		cl.Close()
		return nil, fmt.Errorf("redis: guarded register: %w: %v", impl.ErrUnreachable, err)
	}
	return &guard{cl: cl, ns: cfg.Namespace}, nil
}

// guardClient is what the register needs of a client, one Redis's or a
// cluster's: the scripts (EVALSHA, EVAL on NOSCRIPT) and MGET of one
// hash tag's keys.
type guardClient interface {
	goredis.Scripter
	MGet(ctx context.Context, keys ...string) *goredis.SliceCmd
	Close() error
}

type guard struct {
	cl guardClient
	ns string
	// last and keys are the last lock's name and keys: a client mostly
	// guards the same lock again.
	last string
	keys []string
}

func (g *guard) keysOf(lock string) []string {
	if g.keys == nil || lock != g.last {
		tag := "{" + Key(g.ns, lock) + "}:guard:"
		g.last, g.keys = lock, []string{tag + "unfenced", tag + "fenced", tag + "highest"}
	}
	return g.keys
}

func (g *guard) Read(ctx context.Context, lock string, token uint64) (impl.Reading, error) {
	v, err := guardRead.Run(ctx, g.cl, g.keysOf(lock), strconv.FormatUint(token, 10)).Int64Slice()
	if err != nil || len(v) != 3 {
		return impl.Reading{}, fmt.Errorf("redis: guarded register %s: read: %w", lock, orShort(err, v))
	}
	return impl.Reading{Unfenced: v[0], Fenced: v[1], Refused: v[2] == 1}, nil
}

func (g *guard) Write(ctx context.Context, lock string, token uint64, r impl.Reading) (impl.Written, error) {
	fenced := "1"
	if r.Refused {
		fenced = "0"
	}
	v, err := guardWrite.Run(ctx, g.cl, g.keysOf(lock), strconv.FormatUint(token, 10), r.Unfenced, r.Fenced, fenced).Int64Slice()
	if err != nil || len(v) != 3 {
		return impl.Written{}, fmt.Errorf("redis: guarded register %s: write: %w", lock, orShort(err, v))
	}
	return impl.Written{UnfencedMoved: v[0], FencedAccepted: v[1] == 1, FencedMoved: v[2]}, nil
}

func (g *guard) Values(ctx context.Context, lock string) (fenced, unfenced int64, err error) {
	k := g.keysOf(lock)
	vs, err := g.cl.MGet(ctx, k[1], k[0]).Result()
	if err != nil {
		return 0, 0, fmt.Errorf("redis: guarded register %s: %w", lock, err)
	}
	n := make([]int64, 2)
	for i, v := range vs {
		if s, ok := v.(string); ok {
			if n[i], err = strconv.ParseInt(s, 10, 64); err != nil {
				return 0, 0, fmt.Errorf("redis: guarded register %s: %w", lock, err)
			}
		}
	}
	return n[0], n[1], nil
}

func (g *guard) Close() error { return g.cl.Close() }

// orShort is err, or an error for a reply of the wrong length.
func orShort(err error, v []int64) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%d values in the reply, want 3", len(v))
}
