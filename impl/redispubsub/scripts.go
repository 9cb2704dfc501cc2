package redispubsub

import (
	"strings"
	"sync"
	"sync/atomic"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl/redis"
)

// acquireSrc is Redisson's tryLockInnerAsync: a free lock is taken, a lock
// the caller already holds is re-entered, and a lock someone else holds
// answers with its PTTL, which is how long the caller waits at most
// before it looks again. KEYS[1] is the hash; ARGV[1] the lease in ms,
// ARGV[2] the caller's id.
const acquireSrc = `if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])`

// releaseSrc is Redisson's unlockInnerAsync (RedissonLock), returning also
// what PUBLISH answered, so that the deliveries the server made can be
// summed on the client side: nil when the caller's field is gone (the
// lease was lost); {0, 0} when a re-entry was undone and the lock is still
// held; {1, n} when the lock was freed and the unlock message reached n
// subscribers. As in Redisson 4, an unlock latch makes the script
// idempotent: it answers what the latch holds, if set, and otherwise sets
// it to its answer for ARGV[4] ms; the client deletes it afterwards.
// KEYS[1] is the hash, KEYS[2] the channel, KEYS[3] the latch; ARGV[1] the
// message, ARGV[2] the lease in ms, ARGV[3] the caller's id, ARGV[4] the
// latch's life in ms, ARGV[5] the publish command: publish, or spublish on
// a cluster, which Redisson too passes to its script.
const releaseSrc = `local latched = redis.call('get', KEYS[3])
if latched ~= false then
  return {tonumber(latched), 0}
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if counter > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[3], 0, 'px', ARGV[4])
  return {0, 0}
end
redis.call('del', KEYS[1])
local receivers = redis.call(ARGV[5], KEYS[2], ARGV[1])
redis.call('set', KEYS[3], 1, 'px', ARGV[4])
return {1, receivers}`

// fencedAcquireSrc is RedissonFencedLock's tryLockInnerAsync (RFencedLock):
// acquireSrc that also INCRs a token kept beside the hash, and returns it
// with the grant — {-1, token} — or the holder's PTTL — {pttl, -1}. The
// token key has no TTL: tokens grow for as long as the server keeps it.
// KEYS[2] is the token's key.
const fencedAcquireSrc = `if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
  local token = redis.call('incr', KEYS[2])
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {-1, token}
end
return {redis.call('pttl', KEYS[1]), -1}`

// tokenPrefix is what Redisson prefixes a fenced lock's name with to name
// its token's key (prefixName("redisson_lock_token", name)).
const tokenPrefix = "redisson_lock_token:"

// TokenKey is the key of the fencing token of the lock at key.
func TokenKey(key string) string { return tokenPrefix + "{" + key + "}" }

// Run calls EVALSHA and falls back to EVAL on NOSCRIPT.
var (
	fencedAcquireScript = goredis.NewScript(fencedAcquireSrc)
	acquireScript       = goredis.NewScript(acquireSrc)
	releaseScript       = goredis.NewScript(releaseSrc)
)

// unlockMessage is Redisson's LockPubSub.UNLOCK_MESSAGE.
const unlockMessage = "0"

// channelPrefix is what Redisson prefixes a lock's name with to name its
// channel; the name goes in braces, a cluster hash tag.
const channelPrefix = "redisson_lock__channel:"

// Key is the Redis key of lock name within a cell's namespace: the same
// layout as the single-instance lock's, so that one SCAN pattern finds
// either's leftovers.
func Key(namespace, name string) string { return redis.Key(namespace, name) }

// Channel is the channel releases of the lock at key are published on.
func Channel(key string) string { return channelPrefix + "{" + key + "}" }

// published counts, per channel, the releases this process has sent that
// may publish: a release counts itself before its script runs and takes
// itself back when the script says it published nothing. Settled compares
// a waiter's messages with it, so that a waiter whose message is still on
// its way is not taken for settled. It is shared within the process only
// to make the burst's hand-off barrier exact (as impl/zk shares its
// children versions); it costs the server nothing.
var published sync.Map // channel → *atomic.Int64

// publishedOn returns the release count of channel ch.
func publishedOn(ch string) *atomic.Int64 {
	if v, ok := published.Load(ch); ok {
		return v.(*atomic.Int64)
	}
	v, _ := published.LoadOrStore(ch, new(atomic.Int64))
	return v.(*atomic.Int64)
}

// forget drops the release counts of a namespace's channels, once its
// cell is over.
func forget(namespace string) {
	prefix := Channel(Key(namespace, ""))
	prefix = prefix[:len(prefix)-1] // without the closing brace
	published.Range(func(k, _ any) bool {
		if strings.HasPrefix(k.(string), prefix) {
			published.Delete(k)
		}
		return true
	})
}
