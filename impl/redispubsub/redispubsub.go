package redispubsub

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/result"
)

func init() {
	impl.Register(impl.Driver{
		Name: "redis-pubsub",
		Description: "single Redis, Redisson's RLock: re-entrant hash, waiters SUBSCRIBE and wake on every release (or after the PTTL); " +
			"release through Redisson 4's unlock latch; on a Redis Cluster with --redis-topology cluster, publishing sharded as Redisson does since 3.22.0 " +
			"(SPUBLISH/SSUBSCRIBE) or classic (--redis-publish classic)",
		Recipe:   redis.Redisson + "'s RedissonLock scripts (RLock), in Go",
		Needs:    []impl.Need{redis.SubscribingNeed},
		Options:  []impl.Option{redis.TopologyOption, redis.PublishOption},
		Topology: redis.Topology,
		Validate: redis.ValidateTopology,
		Caps:     impl.LeaseTTL | impl.Renewal,
		Theory:   &Theory,
		New:      New,
		Cleanup:  Cleanup,
		Residue:  Residue,
	})
	impl.Register(impl.Driver{
		Name: "redis-fenced",
		Description: "single Redis, Redisson's RFencedLock: redis-pubsub's RLock whose acquire also INCRs a token beside the hash " +
			"and returns it with the grant; on a Redis Cluster with --redis-topology cluster as redis-pubsub",
		Recipe:   redis.Redisson + "'s RedissonFencedLock scripts (RFencedLock), in Go",
		Needs:    []impl.Need{redis.SubscribingNeed},
		Options:  []impl.Option{redis.TopologyOption, redis.PublishOption},
		Topology: redis.Topology,
		Validate: redis.ValidateTopology,
		Caps:     impl.LeaseTTL | impl.Renewal | impl.Fencing,
		Theory:   &Theory,
		New:      NewFenced,
		Cleanup:  Cleanup,
		Residue:  Residue,
	})
}

// Theory is what subscribing waiters predict: every release reaches every
// waiter still subscribed, so draining n costs n(n−1)/2 deliveries.
var Theory = result.Theory{Waiters: "all subscribed", Formula: "n(n−1)/2", PerHandoffFormula: "n−1", Poly: [3]float64{0, -0.5, 0.5}}

// Locker is one client: one Redisson instance with its own command
// connection and its own subscription connection (to each master, on a
// cluster).
type Locker struct {
	cl      redis.Commands // on a dedicated connection, or a cluster client
	subs    *redis.Subscribers
	publish string // the release script's publish command
	// subKind and unsubKind are the confirmations of (S)SUBSCRIBE and
	// (S)UNSUBSCRIBE; cur is the connection the last subscription went to.
	subKind, unsubKind string
	cur                *goredis.PubSub
	addr               string
	cfg                impl.Config
	id                 string // the hash field: Redisson's uuid:threadId
	fenced             bool   // RFencedLock: the acquire returns a token
	token              uint64 // the last grant's token, when fenced
	ttlMs              int64
	counters           impl.Counters
	stats              stats
	timer              *time.Timer

	// held counts the leases this client holds, by key: an Acquire whose
	// script may have run without its reply reaching us is undone only
	// when it cannot have been a re-entry.
	held map[string]int

	// The last lock used, so that a client that keeps to one lock builds
	// its key and channel once.
	lastName, lastKey, lastCh string
	lastPub                   *atomic.Int64

	// Fed by read, the subscription connection's reader (see sub.go).
	events    chan any
	closing   chan struct{}
	closeOnce sync.Once

	// Settled's view of the wait (see Settled).
	armed    atomic.Bool
	consumed atomic.Int64                 // messages taken off events
	recv     atomic.Int64                 // of those, on the channel since subscribing
	base     atomic.Int64                 // the channel's release count when subscribed
	pub      atomic.Pointer[atomic.Int64] // the channel's release count
}

// New connects one client: its command connection, with both scripts
// loaded, and its subscription connection, both answering before it
// returns.
func New(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
	return newLocker(ctx, cfg, false)
}

// NewFenced connects one client of Redisson's RFencedLock: New whose
// acquire script also draws the grant's fencing token.
func NewFenced(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
	return newLocker(ctx, cfg, true)
}

func newLocker(ctx context.Context, cfg impl.Config, fenced bool) (impl.Locker, error) {
	cfg = cfg.WithDefaults()
	_, addr, err := redis.Addrs(cfg)
	if err != nil {
		return nil, fmt.Errorf("redis-pubsub: %w", err)
	}
	l := &Locker{
		addr:    addr,
		publish: redis.PublishCommand(cfg),
		cfg:     cfg,
		id:      redis.Token() + ":" + strconv.Itoa(cfg.Client),
		ttlMs:   max(cfg.TTL.Milliseconds(), 1),
		timer:   time.NewTimer(time.Hour),
		held:    map[string]int{},
		events:  make(chan any, eventBuffer),
		closing: make(chan struct{}),
		fenced:  fenced,
	}
	l.timer.Stop()
	l.stats.init()
	l.cl, err = redis.DialCommands(ctx, cfg, &l.counters, acquireScript, fencedAcquireScript, releaseScript, redis.HashRenewScript)
	if err != nil {
		return nil, fmt.Errorf("redis-pubsub %w", err)
	}
	dctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	if err := l.openSubscription(dctx, cfg); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// names returns the key, channel and release count of lock name.
func (l *Locker) names(name string) (key, ch string, pub *atomic.Int64) {
	if l.lastKey == "" || name != l.lastName {
		l.lastName, l.lastKey = name, Key(l.cfg.Namespace, name)
		l.lastCh = Channel(l.lastKey)
		l.lastPub = publishedOn(l.lastCh)
	}
	return l.lastKey, l.lastCh, l.lastPub
}

// Acquire tries the lock, and while it is held waits on the lock's channel
// for a release, or for the PTTL to pass, and tries again. As Redisson
// does, it tries once before subscribing, so an uncontended Acquire is one
// round trip, and subscribes before the try that precedes its first wait,
// so no release can fall between the two.
func (l *Locker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	key, ch, pub := l.names(name)
	measured := !impl.IsWarmingUp(ctx)
	got, _, err := l.try(ctx, key, ch, pub, measured)
	if err != nil {
		return nil, err
	}
	if got {
		return l.grant(key, ch, pub, measured), nil
	}
	l.counters.Retries.Add(1)
	if err := l.subscribe(ctx, ch, pub); err != nil {
		l.unsubscribe(ctx, ch)
		return nil, err
	}
	lease, err := l.waitForIt(ctx, key, ch, pub, measured)
	// A grant stands even if the unsubscription is not confirmed: the
	// connection is then broken, and its replacement is not subscribed.
	l.unsubscribe(ctx, ch)
	return lease, err
}

// waitForIt is the subscribed part of Acquire: try, and on a PTTL wait
// for a message or the PTTL, until the lock is ours or ctx is done.
func (l *Locker) waitForIt(ctx context.Context, key, ch string, pub *atomic.Int64, measured bool) (impl.Lease, error) {
	woken := false
	for {
		got, pttl, err := l.try(ctx, key, ch, pub, measured)
		if err != nil {
			return nil, err
		}
		if got {
			return l.grant(key, ch, pub, measured), nil
		}
		l.counters.Retries.Add(1)
		if woken {
			l.counters.WastedWakeups.Add(1)
		}
		if woken, err = l.wait(ctx, ch, pttl, measured); err != nil {
			return nil, err
		}
	}
}

// try runs the acquire script once: granted, or the holder's PTTL.
func (l *Locker) try(ctx context.Context, key, ch string, pub *atomic.Int64, measured bool) (bool, time.Duration, error) {
	if l.fenced {
		return l.tryFenced(ctx, key, ch, pub, measured)
	}
	v, err := acquireScript.Run(ctx, l.cl, []string{key}, l.ttlMs, l.id).Result()
	if errors.Is(err, goredis.Nil) {
		return true, 0, nil
	}
	if err != nil {
		return false, 0, l.failed(ctx, key, ch, pub, measured, err)
	}
	ms, ok := v.(int64)
	if !ok {
		return false, 0, fmt.Errorf("redis-pubsub %s: acquire %s: unexpected reply %v", l.addr, key, v)
	}
	return false, time.Duration(ms) * time.Millisecond, nil
}

// tryFenced is try for RFencedLock: the script answers {-1, token} for
// a grant, whose token it keeps for the lease, or {pttl, -1}.
func (l *Locker) tryFenced(ctx context.Context, key, ch string, pub *atomic.Int64, measured bool) (bool, time.Duration, error) {
	v, err := fencedAcquireScript.Run(ctx, l.cl, []string{key, TokenKey(key)}, l.ttlMs, l.id).Result()
	if err != nil {
		return false, 0, l.failed(ctx, key, ch, pub, measured, err)
	}
	r, ok := v.([]any)
	if !ok || len(r) != 2 {
		return false, 0, fmt.Errorf("redis-fenced %s: acquire %s: unexpected reply %v", l.addr, key, v)
	}
	pttl, _ := r[0].(int64)
	tok, _ := r[1].(int64)
	if pttl == -1 {
		l.token = uint64(tok)
		return true, 0, nil
	}
	return false, time.Duration(pttl) * time.Millisecond, nil
}

// failed ends an Acquire whose script returned err, and says why.
//
// A script that may have run without its reply reaching us may have
// granted the lock: it is undone, on a context ctx's end does not cut
// short, by the release script for our id, or the hash would stay held,
// by nobody, for the whole TTL. That is done only when this client held
// no lease of the key, so that a re-entry cannot be mistaken for it. When
// ctx has expired, the error is ctx's, whatever the connection reported.
func (l *Locker) failed(ctx context.Context, key, ch string, pub *atomic.Int64, measured bool, err error) error {
	if redis.MayHaveLanded(err) && l.held[key] == 0 {
		uctx, cancel := redis.Uncancelled(ctx)
		l.release(uctx, key, ch, pub, measured)
		cancel()
	}
	if impl.Expired(ctx) {
		return impl.CtxErr(ctx)
	}
	return redis.Classify(l.addr, err)
}

func (l *Locker) grant(key, ch string, pub *atomic.Int64, measured bool) *lease {
	l.held[key]++
	return &lease{l: l, key: key, ch: ch, pub: pub, measured: measured, token: l.token, fenced: l.fenced}
}

// release runs the release script: lost when our field was gone. It keeps
// the channel's release count (see published) and, for a measured lease,
// the PUBLISH replies.
func (l *Locker) release(ctx context.Context, key, ch string, pub *atomic.Int64, measured bool) (lost bool, err error) {
	pub.Add(1)
	latch := redis.UnlockLatch(key)
	v, err := releaseScript.Run(ctx, l.cl, []string{key, ch, latch}, unlockMessage, l.ttlMs, l.id,
		redis.UnlockLatchTTL.Milliseconds(), l.publish).Result()
	if err == nil || errors.Is(err, goredis.Nil) {
		// Redisson deletes the latch once the script answered. It does not
		// wait for the DEL's reply, which its connection pipelines ahead of
		// the next command; here the release waits for it.
		l.cl.Del(ctx, latch)
	}
	if errors.Is(err, goredis.Nil) {
		pub.Add(-1)
		return true, nil
	}
	if err != nil {
		pub.Add(-1)
		return false, err
	}
	r, ok := v.([]any)
	if !ok || len(r) != 2 {
		pub.Add(-1)
		return false, fmt.Errorf("redis-pubsub %s: release %s: unexpected reply %v", l.addr, key, v)
	}
	freed, _ := r[0].(int64)
	receivers, _ := r[1].(int64)
	if freed == 0 {
		pub.Add(-1)
		return false, nil
	}
	if measured {
		l.stats.published(receivers)
	}
	return false, nil
}

// Counters returns this client's counters.
func (l *Locker) Counters() *impl.Counters { return &l.counters }

// Close closes its connections; what the client holds stays until its TTL.
func (l *Locker) Close() error {
	var err error
	l.closeOnce.Do(func() {
		close(l.closing)
		if l.subs != nil {
			l.subs.Close()
		}
		err = l.cl.Close()
	})
	return err
}

type lease struct {
	l        *Locker
	key, ch  string
	pub      *atomic.Int64
	measured bool // acquired outside a warm-up
	done     bool
	token    uint64 // RFencedLock's token for this grant
	fenced   bool
}

// Fence returns RFencedLock's token, drawn by the grant itself; RLock has
// none.
func (s *lease) Fence() (uint64, bool) { return s.token, s.fenced }

// Release undoes one hold; the last one deletes the hash and publishes
// the unlock message. A release cut short by ctx's end returns an error
// wrapping ctx.Err(): it says nothing about the lease, which is neither
// lost nor known to be released, and may be released again.
func (s *lease) Release(ctx context.Context) error {
	l := s.l
	if s.done {
		return fmt.Errorf("redis-pubsub %s: %s: lease released twice", l.addr, s.key)
	}
	lost, err := l.release(ctx, s.key, s.ch, s.pub, s.measured)
	if err != nil {
		if impl.Expired(ctx) {
			return fmt.Errorf("redis-pubsub %s: release %s: %w", l.addr, s.key, impl.CtxErr(ctx))
		}
		return redis.Classify(l.addr, err)
	}
	s.done = true
	if l.held[s.key]--; l.held[s.key] <= 0 {
		delete(l.held, s.key)
	}
	if lost {
		l.counters.Lost.Add(1)
		return fmt.Errorf("redis-pubsub %s: key %s: %w", l.addr, s.key, impl.ErrLockLost)
	}
	return nil
}

// Renew is Redisson's watchdog renewal: the hash's TTL is set afresh
// while it still holds this client's owner field.
func (s *lease) Renew(ctx context.Context) error {
	return redis.RenewHash(ctx, s.l.cl, s.l.addr, s.key, s.l.id, time.Duration(s.l.ttlMs)*time.Millisecond)
}

// Cleanup deletes what a cell left under its namespace (hashes of holders
// that died or were closed holding), on a connection of its own.
func Cleanup(ctx context.Context, s impl.Servers, namespace string) error {
	forget(namespace)
	if namespace == "" {
		return nil
	}
	if len(s[redis.ClusterNeed.Role]) > 0 {
		addrs, err := redis.ServerAddrs(ctx, s)
		if err != nil {
			return fmt.Errorf("redis-pubsub: %w", err)
		}
		ns := redis.GlobEscape(namespace)
		return redis.DeleteEach(ctx, addrs, Key(ns, "*"), TokenKey(Key(ns, "*")))
	}
	addrs := s[redis.Need.Role]
	if len(addrs) == 0 {
		return nil
	}
	var c impl.Counters
	cl := redis.NewClient(addrs[0], impl.Config{}.WithDefaults(), &c)
	defer cl.Close()
	for _, pattern := range []string{Key(redis.GlobEscape(namespace), "*"), TokenKey(Key(redis.GlobEscape(namespace), "*"))} {
		if err := redis.DeleteMatching(ctx, cl, pattern); err != nil {
			return fmt.Errorf("redis-pubsub %s: %w", addrs[0], err)
		}
	}
	return nil
}

var (
	_ impl.Settler       = (*Locker)(nil)
	_ impl.Distributions = (*Locker)(nil)
)
