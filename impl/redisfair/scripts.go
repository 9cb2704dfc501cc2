package redisfair

import (
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl/redis"
)

// The scripts follow RedissonFairLock's (tryLockInnerAsync, unlockInnerAsync
// and acquireFailedAsync) line by line, so that the server does the same
// work per call as under Redisson; lockbench's departures are marked.
//
// Times are milliseconds. "now" is the client's clock, as Redisson passes
// System.currentTimeMillis(): every place in the timeout set is reckoned
// from the clocks of the clients that queued.

// dropStale is the loop every script of the fair lock opens with: waiters
// at the head of the queue whose place has expired (their client died, or
// fell too far behind) are removed, so that a dead waiter cannot hold the
// queue up for longer than its place. KEYS[2] is the queue, KEYS[3] the
// timeout set, ARGV[4] now.
const dropStale = `
while true do
  local first = redis.call('lindex', KEYS[2], 0)
  if first == false then
    break
  end
  -- lockbench: an entry without a place counts as expired (Redisson would
  -- fail on it with a Lua error).
  local timeout = tonumber(redis.call('zscore', KEYS[3], first))
  if timeout == nil or timeout <= tonumber(ARGV[4]) then
    redis.call('zrem', KEYS[3], first)
    redis.call('lpop', KEYS[2])
  else
    break
  end
end
`

// acquireSrc tries to take the lock for owner ARGV[2]. It returns nil when
// the lock is granted, otherwise the milliseconds to wait before trying
// again (the caller also wakes on a message). KEYS: lock, queue, timeout
// set. ARGV: lease ms, owner, fair-wait ms, now.
const acquireSrc = dropStale + `
-- the lock is free, and no one waits or the caller is first in line
if (redis.call('exists', KEYS[1]) == 0)
  and ((redis.call('exists', KEYS[2]) == 0)
    or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], ARGV[2])
  -- everyone behind moves up one place
  local keys = redis.call('zrange', KEYS[3], 0, -1)
  for i = 1, #keys, 1 do
    redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), keys[i])
  end
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end

-- re-entry
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end

-- already queued: try again when the holder's lease runs out, or at once
-- when the lock is free (Redisson 3.32 on; before, the time until the
-- place ahead expired, which could be negative and strand the waiter)
if redis.call('zscore', KEYS[3], ARGV[2]) ~= false then
  return math.max(0, redis.call('pttl', KEYS[1]))
end

-- queue at the end, with a place that expires the fair-wait after the
-- one ahead (or after the lock's own TTL when no one is ahead, or the one
-- ahead has no place: Redisson 3.45 on)
local lastThreadId = redis.call('lindex', KEYS[2], -1)
local lastTimeout = false
if lastThreadId ~= false and lastThreadId ~= ARGV[2] then
  lastTimeout = redis.call('zscore', KEYS[3], lastThreadId)
end
local ttl
if lastTimeout ~= false then
  ttl = tonumber(lastTimeout) - tonumber(ARGV[4])
else
  ttl = redis.call('pttl', KEYS[1])
end
local timeout = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4])
if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl
`

// releaseSrc releases owner ARGV[3]'s hold and, when the lock is free,
// publishes ARGV[1] on the head waiter's channel only (KEYS[4]:<head>). It
// returns 1 when released, 0 when still held (re-entry), nil when the lock
// is another owner's, and -1 when it no longer exists. As in Redisson 4,
// an unlock latch (KEYS[5]) makes it idempotent: a latch already set is
// the answer; otherwise the answer is latched for ARGV[5] ms, and the
// client deletes the latch afterwards. KEYS: lock, queue, timeout set,
// channel prefix, latch. ARGV: message, lease ms, owner, now, latch ms,
// publish command (publish, or spublish on a cluster, which Redisson too
// passes to its scripts).
//
// lockbench: Redisson returns 1 for a lock that no longer exists, so that
// unlocking an expired lease succeeds; here it is -1, a lost lease.
const releaseSrc = `
local latched = redis.call('get', KEYS[5])
if latched ~= false then
  return tonumber(latched)
end
` + dropStale + `
if (redis.call('exists', KEYS[1]) == 0) then
  local nextThreadId = redis.call('lindex', KEYS[2], 0)
  if nextThreadId ~= false then
    redis.call(ARGV[6], KEYS[4] .. ':' .. nextThreadId, ARGV[1])
  end
  redis.call('set', KEYS[5], -1, 'px', ARGV[5])
  return -1
end
if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then
  return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if (counter > 0) then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[5], 0, 'px', ARGV[5])
  return 0
end
redis.call('del', KEYS[1])
local nextThreadId = redis.call('lindex', KEYS[2], 0)
if nextThreadId ~= false then
  redis.call(ARGV[6], KEYS[4] .. ':' .. nextThreadId, ARGV[1])
end
redis.call('set', KEYS[5], 1, 'px', ARGV[5])
return 1
`

// giveUpSrc is Redisson's acquireFailedAsync — owner ARGV[1] leaves the
// queue and the timeout set, and everyone behind it gets back the
// fair-wait its place added — followed by lockbench's two additions: a
// grant this owner holds (its reply never reached the client) is given
// back, and when the lock is then free and this owner was told, or would
// have been told, of it (it held it, or it was the head), the new head is
// told instead. It returns 1 when it gave a grant back. KEYS: lock, queue,
// timeout set, channel prefix. ARGV: owner, fair-wait ms, message,
// publish command.
const giveUpSrc = `
local queue = redis.call('lrange', KEYS[2], 0, -1)
local wasHead = queue[1] == ARGV[1]
local i = 1
while i <= #queue and queue[i] ~= ARGV[1] do
  i = i + 1
end
i = i + 1
while i <= #queue do
  redis.call('zincrby', KEYS[3], -tonumber(ARGV[2]), queue[i])
  i = i + 1
end
redis.call('zrem', KEYS[3], ARGV[1])
redis.call('lrem', KEYS[2], 0, ARGV[1])

local held = redis.call('hexists', KEYS[1], ARGV[1]) == 1
if held then
  redis.call('del', KEYS[1])
end
if (held or wasHead) and redis.call('exists', KEYS[1]) == 0 then
  local nextThreadId = redis.call('lindex', KEYS[2], 0)
  if nextThreadId ~= false then
    redis.call(ARGV[4], KEYS[4] .. ':' .. nextThreadId, ARGV[3])
  end
end
if held then
  return 1
end
return 0
`

// The scripts, run with EVALSHA and EVAL on NOSCRIPT.
var (
	acquireScript = goredis.NewScript(acquireSrc)
	releaseScript = goredis.NewScript(releaseSrc)
	giveUpScript  = goredis.NewScript(giveUpSrc)
)

// unlockMessage is what the release publishes: Redisson's
// LockPubSub.UNLOCK_MESSAGE.
const unlockMessage = "0"

// Key is the lock's hash: Redisson's raw lock name, the cell's namespace
// and the lock name as every Redis lock of lockbench names its key.
func Key(namespace, name string) string { return redis.Key(namespace, name) }

// QueueKey is the list of waiting owners, redisson_lock_queue:{lock}.
func QueueKey(namespace, name string) string {
	return prefixName("redisson_lock_queue", Key(namespace, name))
}

// TimeoutKey is the sorted set of when each waiter's place expires,
// redisson_lock_timeout:{lock}.
func TimeoutKey(namespace, name string) string {
	return prefixName("redisson_lock_timeout", Key(namespace, name))
}

// ChannelPrefix is the lock's channel, redisson_lock__channel:{lock}; each
// waiter listens on the prefix, a colon and its owner id.
func ChannelPrefix(namespace, name string) string {
	return prefixName("redisson_lock__channel", Key(namespace, name))
}

// prefixName is Redisson's: the lock's name becomes a hash tag, so that
// in a cluster all of a lock's keys share a slot, unless it has braces of
// its own.
func prefixName(prefix, name string) string {
	if strings.Contains(name, "{") {
		return prefix + ":" + name
	}
	return prefix + ":{" + name + "}"
}

// keys are one lock's keys.
type keys struct {
	lock, queue, timeout, channel string
}

func keysOf(namespace, name string) keys {
	return keys{
		lock:    Key(namespace, name),
		queue:   QueueKey(namespace, name),
		timeout: TimeoutKey(namespace, name),
		channel: ChannelPrefix(namespace, name),
	}
}
