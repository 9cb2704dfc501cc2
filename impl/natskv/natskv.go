package natskv

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/lockbench/lockbench/internal/serverkind"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockbench/lockbench/impl"
)

func init() {
	impl.Register(impl.Driver{
		Name: "nats-kv",
		Description: "NATS JetStream KV: Create with a per-key TTL, waiters Watch the key and try again on every " +
			"delete or expiry marker (every watcher wakes); the revision is the fencing token",
		Recipe: "a NATS KV lock (Create with a per-key TTL, Watch for the delete, Delete at the held revision) over " +
			ClientModule + " " + impl.ModuleVersion(ClientModule) + "'s jetstream KV API",
		Needs: []impl.Need{Need},
		Caps:  impl.LeaseTTL | impl.Fencing,
		// No Theory: every watcher wakes on a release, as result.WatchAll
		// says, but not exactly once each: over twenty bursts of 64 the
		// release wake-ups ran 1,992 to 2,016 where n(n−1)/2 says 2,016 (a
		// waiter between its watch's events can see two changes as one), so
		// the exact-count test cannot hold it to the formula.
		New:      New,
		Validate: Validate,
		Cleanup:  Cleanup,
		Residue:  Residue,
	})
}

// ClientModule is the client library the recipe calls.
const ClientModule = "github.com/nats-io/nats.go"

// Need is the one NATS server (JetStream on) the lock uses (--nats,
// LOCKBENCH_NATS).
var Need = impl.Need{Role: "nats", Kind: serverkind.NATS, Count: 1, Usage: "NATS server address (JetStream on, 2.11 or later)", Guard: Guard}

// Bucket is the KV bucket every lock lives in; cells are kept apart by
// their keys' first token.
const Bucket = "lockbench"

// markerTTL is how long the bucket keeps the markers a key's TTL leaves
// (LimitMarkerTTL); setting it is what lets keys carry a TTL at all. The
// server takes no less than a second.
const markerTTL = time.Second

// Validate refuses a TTL NATS cannot keep: a per-key TTL is whole
// seconds, at least one.
func Validate(cfg impl.Config) error {
	if cfg.TTL != 0 && cfg.TTL < time.Second {
		return fmt.Errorf("nats-kv: --ttl %v: a NATS KV key's TTL is whole seconds, at least 1s", cfg.TTL)
	}
	return nil
}

// Locker is one client: its own NATS connection and KV handle.
type Locker struct {
	nc       *nats.Conn
	kv       jetstream.KeyValue
	addr     string
	cfg      impl.Config
	ttl      time.Duration
	counters impl.Counters
	sentBase uint64 // messages the connection had sent when New returned

	// Settled's view: waiting with the watch caught up and nothing unread.
	asleep  atomic.Bool
	watcher atomic.Pointer[jetstream.KeyWatcher]
}

// New connects one client and opens the bucket, creating it the first
// time (clients that race to create it open the winner's).
func New(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
	cfg = cfg.WithDefaults()
	if err := Validate(cfg); err != nil {
		return nil, err
	}
	addrs := cfg.Servers[Need.Role]
	if len(addrs) == 0 {
		return nil, errors.New("nats-kv: no server address")
	}
	l := &Locker{addr: addrs[0], cfg: cfg, ttl: cfg.TTL.Truncate(time.Second)}
	kv, nc, err := open(ctx, l.addr, cfg.DialTimeout)
	if err != nil {
		return nil, err
	}
	l.nc, l.kv = nc, kv
	l.sentBase = nc.Stats().OutMsgs
	return l, nil
}

// open connects to addr and opens (or creates) the bucket.
func open(ctx context.Context, addr string, timeout time.Duration) (jetstream.KeyValue, *nats.Conn, error) {
	nc, err := nats.Connect("nats://"+addr, nats.Timeout(timeout), nats.MaxReconnects(0), nats.NoEcho())
	if err != nil {
		return nil, nil, fmt.Errorf("nats-kv %s: %w: %w", addr, impl.ErrUnreachable, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("nats-kv %s: %w", addr, err)
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	kv, err := js.KeyValue(dctx, Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(dctx, jetstream.KeyValueConfig{Bucket: Bucket, LimitMarkerTTL: markerTTL})
		if errors.Is(err, jetstream.ErrBucketExists) || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			kv, err = js.KeyValue(dctx, Bucket)
		}
	}
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("nats-kv %s: bucket %s: %w", addr, Bucket, err)
	}
	return kv, nc, nil
}

// Key is the KV key of lock name in namespace: KV keys take letters,
// digits and -/_=. only, so anything else becomes '_'.
func Key(namespace, name string) string { return safe(namespace) + "." + safe(name) }

func safe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '=':
			return r
		}
		return '_'
	}, s)
}

// token is a value no other grant carries: 128 random bits.
func token() []byte {
	var b [16]byte
	crand.Read(b[:])
	return []byte(hex.EncodeToString(b[:]))
}

// sent brings RoundTrips up to the messages the connection has sent.
func (l *Locker) sent() {
	l.counters.RoundTrips.Store(int64(l.nc.Stats().OutMsgs - l.sentBase))
}

// Acquire Creates the key; while it is held, it watches the key and tries
// again on each delete or purge marker, until the Create succeeds or ctx
// is done.
func (l *Locker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	key := Key(l.cfg.Namespace, name)
	val := token()
	rev, err := l.create(ctx, key, val)
	if err == nil {
		return &lease{l: l, key: key, rev: rev}, nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return nil, l.failed(ctx, key, err)
	}
	l.counters.Retries.Add(1)
	return l.wait(ctx, key, val)
}

// wait is the watching part of Acquire.
func (l *Locker) wait(ctx context.Context, key string, val []byte) (impl.Lease, error) {
	w, err := l.kv.Watch(ctx, key)
	l.sent()
	if err != nil {
		return nil, l.failed(ctx, key, err)
	}
	l.watcher.Store(&w)
	defer func() {
		l.asleep.Store(false)
		l.watcher.Store(nil)
		w.Stop()
		l.sent()
	}()
	synced, free := false, false
	for {
		l.asleep.Store(synced)
		var e jetstream.KeyValueEntry
		select {
		case <-ctx.Done():
			return nil, impl.CtxErr(ctx)
		case e = <-w.Updates():
		}
		l.asleep.Store(false)
		woken := false
		switch {
		case e == nil: // caught up: the key's last entry, if any, came first
			synced = true
			if !free {
				continue
			}
		case !synced:
			free = e.Operation() != jetstream.KeyValuePut
			continue
		default:
			l.counters.Notifications.Add(1)
			if e.Operation() == jetstream.KeyValuePut {
				continue
			}
			woken = true
			l.counters.Wakeups.Add(1)
			l.counters.ReleaseWakeups.Add(1)
		}
		rev, err := l.create(ctx, key, val)
		if err == nil {
			return &lease{l: l, key: key, rev: rev}, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return nil, l.failed(ctx, key, err)
		}
		l.counters.Retries.Add(1)
		if woken {
			l.counters.WastedWakeups.Add(1)
		}
	}
}

// create is KV Create with the lock's TTL. The request is not cut short
// by ctx: a Create abandoned on the wire may still land, and only its
// reply says whether it did. It is bounded by the dial timeout instead,
// and a grant that comes after ctx ended is deleted again at its revision
// and reported as ctx's error.
func (l *Locker) create(ctx context.Context, key string, val []byte) (uint64, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.DialTimeout)
	defer cancel()
	rev, err := l.kv.Create(rctx, key, val, jetstream.KeyTTL(l.ttl))
	if err == nil && impl.Expired(ctx) {
		l.kv.Delete(rctx, key, jetstream.LastRevision(rev))
		err = impl.CtxErr(ctx)
	}
	l.sent()
	return rev, err
}

// failed ends an Acquire whose request returned err: ctx's error once ctx
// has ended, whatever the request said.
func (l *Locker) failed(ctx context.Context, key string, err error) error {
	if impl.Expired(ctx) {
		return impl.CtxErr(ctx)
	}
	if errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrNoServers) || errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("nats-kv %s: %s: %w: %w", l.addr, key, impl.ErrUnreachable, err)
	}
	return fmt.Errorf("nats-kv %s: %s: %w", l.addr, key, err)
}

// Settled reports whether a waiter's watch has caught up and it waits for
// an entry with none unread.
func (l *Locker) Settled() bool {
	w := l.watcher.Load()
	return l.asleep.Load() && w != nil && len((*w).Updates()) == 0
}

// Counters returns this client's counters.
func (l *Locker) Counters() *impl.Counters { return &l.counters }

// Close closes the connection; keys it holds stay until their TTL.
func (l *Locker) Close() error {
	l.nc.Close()
	return nil
}

type lease struct {
	l    *Locker
	key  string
	rev  uint64
	done bool
}

// Fence is the grant's revision: the bucket's stream sequence, which grows
// with every write, so with grant order.
func (s *lease) Fence() (uint64, bool) { return s.rev, true }

// Release deletes the key at the held revision. Any other last revision —
// the TTL's marker, a successor's Create — means the lock was lost.
func (s *lease) Release(ctx context.Context) error {
	l := s.l
	if s.done {
		return fmt.Errorf("nats-kv %s: %s: lease released twice", l.addr, s.key)
	}
	err := l.kv.Delete(ctx, s.key, jetstream.LastRevision(s.rev))
	l.sent()
	if err == nil {
		s.done = true
		return nil
	}
	if impl.Expired(ctx) {
		return fmt.Errorf("nats-kv %s: release %s: %w", l.addr, s.key, impl.CtxErr(ctx))
	}
	var api *jetstream.APIError
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.As(err, &api) && api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
		s.done = true
		l.counters.Lost.Add(1)
		return fmt.Errorf("nats-kv %s: %s at revision %d: %w", l.addr, s.key, s.rev, impl.ErrLockLost)
	}
	return fmt.Errorf("nats-kv %s: release %s: %w", l.addr, s.key, err)
}

// Residue counts the keys of namespace that are held (a delete or expiry
// marker is no key).
func Residue(ctx context.Context, s impl.Servers, namespace string) (int, error) {
	addrs := s[Need.Role]
	if len(addrs) == 0 {
		return 0, nil
	}
	kv, nc, err := open(ctx, addrs[0], impl.DefaultDialTimeout)
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	lister, err := kv.ListKeysFiltered(ctx, safe(namespace)+".>")
	if err != nil {
		return 0, fmt.Errorf("nats-kv %s: list keys: %w", addrs[0], err)
	}
	n := 0
	for range lister.Keys() {
		n++
	}
	return n, nil
}

// Cleanup purges what a cell left under its namespace, on a connection of
// its own.
func Cleanup(ctx context.Context, s impl.Servers, namespace string) error {
	addrs := s[Need.Role]
	if namespace == "" || len(addrs) == 0 {
		return nil
	}
	kv, nc, err := open(ctx, addrs[0], impl.DefaultDialTimeout)
	if err != nil {
		return err
	}
	defer nc.Close()
	lister, err := kv.ListKeysFiltered(ctx, safe(namespace)+".>")
	if err != nil {
		return fmt.Errorf("nats-kv %s: list keys: %w", addrs[0], err)
	}
	for k := range lister.Keys() {
		if err := kv.Purge(ctx, k); err != nil {
			return fmt.Errorf("nats-kv %s: purge %s: %w", addrs[0], k, err)
		}
	}
	return nil
}
