package redisfair

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/result"
)

func init() {
	impl.Register(impl.Driver{
		Name: "redis-fair",
		Description: "Redisson's fair lock on single Redis: FIFO queue and timeout set in Lua, only the head waiter's channel told; " +
			"release through Redisson 4's unlock latch; on a Redis Cluster with --redis-topology cluster, publishing sharded as Redisson does " +
			"since 3.22.0 (SPUBLISH/SSUBSCRIBE) or classic (--redis-publish classic)",
		Recipe:   redis.Redisson + "'s RedissonFairLock scripts, in Go",
		Needs:    []impl.Need{redis.SubscribingNeed},
		Options:  []impl.Option{WaitOption, redis.TopologyOption, redis.PublishOption},
		Topology: redis.Topology,
		Validate: redis.ValidateTopology,
		Caps:     impl.LeaseTTL | impl.Renewal,
		// A dead waiter's place expires WaitOption after the one ahead of
		// it, the first's after the lock's TTL as it stood when it queued
		// (the acquire script's timeout = pttl + wait): until then, the
		// waiters behind it are not told.
		WaiterBound: func(cfg impl.Config) (time.Duration, string) {
			return cfg.TTL + cfg.Duration(WaitOption), "--ttl + --" + WaitOption.Name
		},
		Theory:  &HeadWaiter,
		New:     func(ctx context.Context, cfg impl.Config) (impl.Locker, error) { return New(ctx, cfg) },
		Cleanup: Cleanup,
		Residue: Residue,
	})
}

// WaitOption is Redisson's threadWaitTime: how much later than the one
// ahead of it each waiter's place in the queue expires. A waiter whose
// place expires before it is granted (its client died, or the ones ahead
// took longer than their places) is dropped from the queue, and queues
// again at the end when it next tries.
var WaitOption = impl.DurationOption("fair-wait", 5*time.Minute, time.Millisecond,
	"redis-fair: how much later than the one ahead each waiter's place expires (Redisson's fairLockWaitTimeout, 5 min by default)")

// HeadWaiter is what the fair lock's release predicts: only the head of
// the queue is told, on its own channel, so draining n costs n−1
// messages, one per hand-off.
var HeadWaiter = result.Theory{Waiters: "head waiter's channel", Formula: "n−1", PerHandoffFormula: "1", Poly: [3]float64{-1, 1, 0}}

// Locker is one client of the fair lock: one Redisson instance, with a
// command connection and a subscription connection of its own.
type Locker struct {
	cl       redis.Commands // on a dedicated connection, or a cluster client
	sub      *subscription
	publish  string // the scripts' publish command
	addr     string
	cfg      impl.Config
	wait     time.Duration // the fair-wait, Redisson's threadWaitTime
	id       string        // the instance id; owners are id:n
	seq      uint64        // the last Acquire's n
	counters impl.Counters
	timer    *time.Timer
	closed   sync.Once
	closeErr error
}

// New connects one client: its command connection, with the scripts
// loaded, and its subscription connection, both answered by the server.
func New(ctx context.Context, cfg impl.Config) (*Locker, error) {
	cfg = cfg.WithDefaults()
	_, addr, err := redis.Addrs(cfg)
	if err != nil {
		return nil, fmt.Errorf("redis-fair: %w", err)
	}
	l := &Locker{addr: addr, cfg: cfg, wait: cfg.Duration(WaitOption), id: instanceID(), timer: time.NewTimer(time.Hour),
		publish: redis.PublishCommand(cfg)}
	l.timer.Stop()
	cl, err := redis.DialCommands(ctx, cfg, &l.counters, acquireScript, releaseScript, giveUpScript, redis.HashRenewScript)
	if err != nil {
		return nil, fmt.Errorf("redis %w", err)
	}
	sub, err := newSubscription(ctx, cfg, cl, &l.counters)
	if err != nil {
		cl.Close()
		if impl.Expired(ctx) {
			return nil, impl.CtxErr(ctx)
		}
		return nil, fmt.Errorf("redis %s: subscription: %w: %w", l.addr, impl.ErrUnreachable, err)
	}
	l.cl, l.sub = cl, sub
	return l, nil
}

// instanceID is a random UUID, as a Redisson instance names itself.
func instanceID() string {
	b := make([]byte, 16)
	if _, err := crand.Read(b); err != nil {
		panic("redis-fair: no randomness for instance ids: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Acquire tries once; if queued, it subscribes to its own channel and,
// with the subscription confirmed, tries again each time a message or the
// wait the script returned ends, until granted or ctx is done. Whatever
// ends it without a grant, it leaves the queue (and gives back a grant
// whose reply it did not read) before it returns.
func (l *Locker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	k := keysOf(l.cfg.Namespace, name)
	l.seq++
	owner := l.id + ":" + strconv.FormatUint(l.seq, 10)
	granted, _, err := l.try(ctx, k, owner)
	if err != nil {
		return nil, l.giveUp(ctx, k, owner, "", redis.MayHaveLanded(err), err)
	}
	if granted {
		return &lease{l: l, k: k, owner: owner}, nil
	}
	ch := k.channel + ":" + owner
	if err = l.sub.subscribe(ctx, ch); err == nil {
		err = l.queued(ctx, k, owner)
	}
	if err != nil {
		return nil, l.giveUp(ctx, k, owner, ch, true, err)
	}
	l.sub.unsubscribe(ctx, ch)
	return &lease{l: l, k: k, owner: owner}, nil
}

// queued is Redisson's wait loop: try, and if not granted wait for the
// head's message on the subscription, or for the time the script said.
func (l *Locker) queued(ctx context.Context, k keys, owner string) error {
	woken := false
	for {
		granted, ttl, err := l.try(ctx, k, owner)
		if err != nil || granted {
			return err
		}
		if woken {
			l.counters.WastedWakeups.Add(1)
		}
		if woken, err = l.sub.wait(ctx, l.timer, l.pause(ttl)); err != nil {
			return err
		}
		if woken {
			l.counters.Wakeups.Add(1)
			l.counters.ReleaseWakeups.Add(1) // every message announces a release
		}
	}
}

// pause is how long to wait for a message after a try that returned ttl.
// Redisson waits for a message alone when ttl is negative (the place
// ahead has already expired); here the wait is bounded by the lease, so
// that a message lost with a connection cannot strand a waiter.
func (l *Locker) pause(ttl time.Duration) time.Duration {
	if ttl < 0 {
		return l.cfg.TTL
	}
	return ttl
}

// try runs the acquire script once: granted, or the wait it returned. A
// try that does not grant counts as a retry.
func (l *Locker) try(ctx context.Context, k keys, owner string) (bool, time.Duration, error) {
	ms, err := acquireScript.Run(ctx, l.cl, []string{k.lock, k.queue, k.timeout},
		millis(l.cfg.TTL), owner, millis(l.wait), time.Now().UnixMilli()).Int64()
	switch {
	case errors.Is(err, goredis.Nil):
		return true, 0, nil
	case err != nil:
		return false, 0, err
	}
	l.counters.Retries.Add(1)
	return false, time.Duration(ms) * time.Millisecond, nil
}

// millis is d in whole milliseconds, at least 1: PEXPIRE 0 would delete.
func millis(d time.Duration) int64 { return max(d.Milliseconds(), 1) }

// giveUp ends an Acquire that was not granted: it unsubscribes from ch (if
// subscribed) and, if a try may have reached the server, runs the give-up
// script, on a context ctx's end does not cut short, so that nothing of
// this owner stays queued or held. The error is ctx's when ctx has
// expired, whatever the connection reported (see expired).
func (l *Locker) giveUp(ctx context.Context, k keys, owner, ch string, landed bool, cause error) error {
	if ch != "" {
		l.sub.unsubscribe(ctx, ch)
	}
	if landed {
		uctx, cancel := redis.Uncancelled(ctx)
		giveUpScript.Run(uctx, l.cl, []string{k.lock, k.queue, k.timeout, k.channel}, owner, millis(l.wait), unlockMessage, l.publish)
		cancel()
	}
	if impl.Expired(ctx) {
		return impl.CtxErr(ctx)
	}
	if errors.Is(cause, impl.ErrUnreachable) {
		return fmt.Errorf("redis %s: %w", l.addr, cause)
	}
	return redis.Classify(l.addr, cause)
}

// Settled reports whether Acquire is blocked on its subscription and every
// message the subscription connection has received has been taken.
func (l *Locker) Settled() bool { return l.sub.settled() }

// Counters returns this client's counters.
func (l *Locker) Counters() *impl.Counters { return &l.counters }

// Close closes both connections, once however often it is called (a
// crashed client is closed by the test or fault that killed it, then again
// by its owner); a lock still held stays until its TTL.
func (l *Locker) Close() error {
	l.closed.Do(func() { l.closeErr = errors.Join(l.sub.close(), l.cl.Close()) })
	return l.closeErr
}

type lease struct {
	l     *Locker
	k     keys
	owner string
}

// Fence says there is none: Redisson's fair lock has no token.
func (s *lease) Fence() (uint64, bool) { return 0, false }

// Renew is Redisson's watchdog renewal: the lock hash's TTL is set afresh
// while it still holds this lease's owner field.
func (s *lease) Renew(ctx context.Context) error {
	return redis.RenewHash(ctx, s.l.cl, s.l.addr, s.k.lock, s.owner, s.l.cfg.TTL)
}

// Release runs the release script. A release cut short by ctx's end
// returns an error wrapping ctx.Err(): the lease is neither lost nor known
// to be released.
func (s *lease) Release(ctx context.Context) error {
	k := s.k
	latch := redis.UnlockLatch(k.lock)
	n, err := releaseScript.Run(ctx, s.l.cl, []string{k.lock, k.queue, k.timeout, k.channel, latch},
		unlockMessage, millis(s.l.cfg.TTL), s.owner, time.Now().UnixMilli(), redis.UnlockLatchTTL.Milliseconds(), s.l.publish).Int64()
	if err == nil || errors.Is(err, goredis.Nil) {
		// Redisson deletes the latch once the script answered, without
		// waiting for the reply; here the release waits for it.
		s.l.cl.Del(ctx, latch)
	}
	switch {
	case errors.Is(err, goredis.Nil) || (err == nil && n < 0):
		s.l.counters.Lost.Add(1)
		return fmt.Errorf("redis %s: lock %s: %w", s.l.addr, k.lock, impl.ErrLockLost)
	case err != nil && impl.Expired(ctx):
		return fmt.Errorf("redis %s: release %s: %w", s.l.addr, k.lock, impl.CtxErr(ctx))
	case err != nil:
		return redis.Classify(s.l.addr, err)
	}
	return nil
}

// Cleanup deletes a cell's lock hashes, queues and timeout sets, on a
// connection of its own.
func Cleanup(ctx context.Context, s impl.Servers, namespace string) error {
	if namespace != "" && len(s[redis.ClusterNeed.Role]) > 0 {
		addrs, err := redis.ServerAddrs(ctx, s)
		if err != nil {
			return fmt.Errorf("redis-fair: %w", err)
		}
		ns := redis.GlobEscape(namespace)
		return redis.DeleteEach(ctx, addrs, Key(ns, "*"), QueueKey(ns, "*"), TimeoutKey(ns, "*"))
	}
	addrs := s[redis.Need.Role]
	if namespace == "" || len(addrs) == 0 {
		return nil
	}
	cl := goredis.NewClient(&goredis.Options{Addr: addrs[0], Protocol: 2, DisableIdentity: true})
	defer cl.Close()
	ns := redis.GlobEscape(namespace)
	if err := redis.DeleteMatching(ctx, cl, Key(ns, "*"), QueueKey(ns, "*"), TimeoutKey(ns, "*")); err != nil {
		return fmt.Errorf("redis-fair %s: %w", addrs[0], err)
	}
	return nil
}
