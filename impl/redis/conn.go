package redis

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/lockbench/lockbench/impl"
)

// releaseSrc deletes the key only if it still holds our token, so a client
// whose lease expired cannot delete a later holder's lock.
const releaseSrc = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`

// renewSrc extends the key's TTL (ARGV[2], ms) only if it still holds our
// token: a holder whose lease expired and was taken must not extend the
// next holder's.
const renewSrc = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`

// RenewScript is the compare-and-extend script.
var RenewScript = goredis.NewScript(renewSrc)

// hashRenewSrc is Redisson's watchdog renewal (renewExpiration): the lock
// hash's TTL (ARGV[2], ms) is set afresh only while it holds our owner
// field (ARGV[1]).
const hashRenewSrc = `if redis.call("hexists", KEYS[1], ARGV[1]) == 1 then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`

// HashRenewScript renews a Redisson-style lock hash.
var HashRenewScript = goredis.NewScript(hashRenewSrc)

// RenewHash runs HashRenewScript for the lock hash key held by owner: an
// error wrapping impl.ErrLockLost when the hash is no longer ours, ctx's
// error when ctx ended first.
func RenewHash(ctx context.Context, cl goredis.Scripter, addr, key, owner string, ttl time.Duration) error {
	n, err := HashRenewScript.Run(ctx, cl, []string{key}, owner, ttl.Milliseconds()).Int64()
	switch {
	case err != nil && impl.Expired(ctx):
		return fmt.Errorf("redis %s: renew %s: %w", addr, key, impl.CtxErr(ctx))
	case err != nil:
		return Classify(addr, err)
	case n == 0:
		return fmt.Errorf("redis %s: renew %s: %w", addr, key, impl.ErrLockLost)
	}
	return nil
}

// ReleaseScript is the compare-and-delete script. Run calls EVALSHA and
// falls back to EVAL on NOSCRIPT.
var ReleaseScript = goredis.NewScript(releaseSrc)

// Dial opens one client with exactly one connection, counts every command it
// sends into c.RoundTrips, and checks the server answers and has the release
// script loaded. Connection set-up happens here, never inside a measurement.
func Dial(ctx context.Context, addr string, cfg impl.Config, c *impl.Counters) (*goredis.Client, error) {
	cl := NewReplyClient(addr, cfg, c)
	ctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	if err := cl.Ping(ctx).Err(); err != nil {
		cl.Close()
		return nil, fmt.Errorf("redis %s: %w: %w", addr, impl.ErrUnreachable, err)
	}
	for _, s := range []*goredis.Script{ReleaseScript, RenewScript} {
		if err := s.Load(ctx, cl).Err(); err != nil {
			cl.Close()
			return nil, fmt.Errorf("redis %s: load lock scripts: %w", addr, err)
		}
	}
	return cl, nil
}

// NewClient makes the client Dial makes without connecting: it dials on
// first use and again after a failure, so a server that is down now is
// used once it is back.
func NewClient(addr string, cfg impl.Config, c *impl.Counters) *goredis.Client {
	return newClient(addr, cfg, c, false)
}

// NewReplyClient is NewClient for request–reply commands only, never
// pub/sub: each request is held back until its reply is read, which
// spares the kernel an empty read per command (see replyConn).
func NewReplyClient(addr string, cfg impl.Config, c *impl.Counters) *goredis.Client {
	return newClient(addr, cfg, c, true)
}

func newClient(addr string, cfg impl.Config, c *impl.Counters, reply bool) *goredis.Client {
	opt := &goredis.Options{
		Addr:                  addr,
		Protocol:              2,
		PoolSize:              1,
		MaxActiveConns:        1,
		MaxRetries:            -1, // a retry would hide a failed round trip
		DialTimeout:           cfg.DialTimeout,
		ContextTimeoutEnabled: true,
		DisableIdentity:       true,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
	}
	if reply {
		dial := goredis.NewDialer(opt)
		opt.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return newReplyConn(c), nil
		}
	}
	cl := goredis.NewClient(opt)
	cl.AddHook(countHook{c})
	return cl
}

// Classify wraps err so that a connection that cannot be made counts as
// unreachable rather than as some other error.
func Classify(addr string, err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return fmt.Errorf("redis %s: %w: %w", addr, impl.ErrUnreachable, err)
	}
	return fmt.Errorf("redis %s: %w", addr, err)
}

// Token returns a token no other grant will carry: 64 random bits drawn
// once per process, then a per-process counter. Tokens are what keeps a
// stale holder from deleting the next holder's lock, so they must differ
// across clients, cells and processes (two lockbench shards with the same
// --seed included); they are deliberately not derived from the seed.
func Token() string {
	var t token
	t.draw()
	return t.String()
}

// token is a Token written in place, so that a lease can hold its token
// in itself: go-redis sends it as it is (encoding.BinaryMarshaler), and an
// acquisition allocates its lease alone, not a string and its box besides.
type token [32]byte

// draw writes the next token into t: the process's nonce, then the next
// number, each as 16 hex digits. hex.Encode of the 16 bytes took 307
// instructions a grant; the nonce's half is now written once, and the
// number's from a table of digit pairs.
func (t *token) draw() {
	*(*[16]byte)(t[:16]) = nonceHex
	putHex64((*[16]byte)(t[16:]), tokenSeq.Add(1))
}

// putHex64 writes v into dst as 16 lowercase hex digits, most significant
// first, as hex.Encode writes its big-endian bytes.
func putHex64(dst *[16]byte, v uint64) {
	for i := 7; i >= 0; i-- {
		p := hexPairs[byte(v)]
		dst[2*i], dst[2*i+1] = p[0], p[1]
		v >>= 8
	}
}

// hexPairs are the two hex digits of every byte.
var hexPairs = func() (t [256][2]byte) {
	const digits = "0123456789abcdef"
	for i := range t {
		t[i] = [2]byte{digits[i>>4], digits[i&15]}
	}
	return t
}()

// MarshalBinary is the token as go-redis sends it; the bytes are t's own.
func (t *token) MarshalBinary() ([]byte, error) { return t[:], nil }

func (t *token) String() string { return string(t[:]) }

var (
	processNonce = func() uint64 {
		var b [8]byte
		if _, err := crand.Read(b[:]); err != nil {
			panic("redis: no randomness for lock tokens: " + err.Error())
		}
		return binary.BigEndian.Uint64(b[:])
	}()
	tokenSeq atomic.Uint64
	// nonceHex is processNonce as a token's first 16 hex digits.
	nonceHex = func() (h [16]byte) {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], processNonce)
		hex.Encode(h[:], b[:])
		return h
	}()
)

// countHook counts each command sent, including the EVAL fallback.
type countHook struct{ c *impl.Counters }

func (h countHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h countHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		h.c.RoundTrips.Add(1)
		return next(ctx, cmd)
	}
}

func (h countHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		h.c.RoundTrips.Add(1)
		return next(ctx, cmds)
	}
}

// Key is the Redis key of lock name within a cell's namespace.
func Key(namespace, name string) string { return "lockbench:" + namespace + ":" + name }
