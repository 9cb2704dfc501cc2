package rueidislock

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"strings"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
)

// acquireScript is the library's acquire script (acqat in
// rueidislock/lock.go, SET NX PXAT then GET), copied so that its runs can
// be told apart from the other scripts' by their SHA-1; the test that an
// uncontended Acquire counts one try fails if the library changes it.
const acquireScript = `local r = redis.call("SET",KEYS[1],ARGV[1],"NX","PXAT",ARGV[2]);redis.call("GET",KEYS[1]);return r`

var acquireSHA = func() string {
	sum := sha1.Sum([]byte(acquireScript))
	return hex.EncodeToString(sum[:])
}()

// build is the Locker's LockerOption.ClientBuilder: the rueidis client the
// library would make, its invalidations and commands seen on the way.
func (l *Locker) build(opt rueidis.ClientOption) (rueidis.Client, error) {
	onInvalidations := opt.OnInvalidations
	opt.OnInvalidations = func(msgs []rueidis.RedisMessage) {
		l.invalidated(msgs)
		if onInvalidations != nil {
			onInvalidations(msgs)
		}
	}
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, err
	}
	return counted{Client: c, l: l}, nil
}

// invalidated counts the keys an invalidation names (a nil one, sent when
// the connection was lost and the cache flushed, counts once) and marks a
// waiter's Acquire as woken when one of its lock's keys is among them.
func (l *Locker) invalidated(msgs []rueidis.RedisMessage) {
	if msgs == nil {
		l.counters.Notifications.Add(1)
		l.pending.Store(true)
		return
	}
	l.counters.Notifications.Add(int64(len(msgs)))
	first := l.waitKey.Load()
	if first == nil {
		return
	}
	name := (*first)[len(keyPrefix+":0:"):]
	for _, m := range msgs {
		if k, err := m.ToString(); err == nil && strings.HasPrefix(k, keyPrefix+":") && strings.HasSuffix(k, ":"+name) {
			l.pending.Store(true)
			return
		}
	}
}

// counted is the library's rueidis client with every command counted, and
// each acquire script on the waited lock's first key seen as a try.
type counted struct {
	rueidis.Client
	l *Locker
}

func (c counted) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	l := c.l
	l.counters.RoundTrips.Add(1)
	if l.isTry(cmd.Commands()) {
		l.pending.Store(false)
		if l.tries.Add(1) > 1 {
			l.counters.Wakeups.Add(1)
			l.counters.ReleaseWakeups.Add(1)
		}
	}
	l.inflight.Add(1)
	defer l.inflight.Add(-1)
	return c.Client.Do(ctx, cmd)
}

func (c counted) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	c.l.counters.RoundTrips.Add(1)
	c.l.inflight.Add(1)
	defer c.l.inflight.Add(-1)
	return c.Client.DoMulti(ctx, multi...)
}

// isTry reports whether args run the acquire script (by SHA-1, or as EVAL
// after NOSCRIPT) on the first key of the lock an Acquire waits for.
func (l *Locker) isTry(args []string) bool {
	first := l.waitKey.Load()
	if first == nil || len(args) < 4 || args[3] != *first {
		return false
	}
	switch strings.ToUpper(args[0]) {
	case "EVALSHA":
		return args[1] == acquireSHA
	case "EVAL":
		return args[1] == acquireScript
	}
	return false
}

// pattern matches every key of namespace's locks.
func pattern(namespace string) string {
	return keyPrefix + ":*:" + redis.Key(redis.GlobEscape(namespace), "*")
}

// Residue counts the keys of namespace's locks on the server.
func Residue(ctx context.Context, s impl.Servers, namespace string) (int, error) {
	addrs := s[redis.Need.Role]
	if len(addrs) == 0 {
		return 0, nil
	}
	var c impl.Counters
	cl := redis.NewClient(addrs[0], impl.Config{}.WithDefaults(), &c)
	defer cl.Close()
	return redis.CountMatching(ctx, cl, pattern(namespace))
}

// Cleanup deletes the keys of holders that died or were closed holding,
// on a connection of its own.
func Cleanup(ctx context.Context, s impl.Servers, namespace string) error {
	addrs := s[redis.Need.Role]
	if namespace == "" || len(addrs) == 0 {
		return nil
	}
	var c impl.Counters
	cl := redis.NewClient(addrs[0], impl.Config{}.WithDefaults(), &c)
	defer cl.Close()
	return redis.DeleteMatching(ctx, cl, pattern(namespace))
}
