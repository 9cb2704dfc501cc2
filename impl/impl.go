package impl

import (
	"context"
	"time"
)

// Locker is one simulated client's handle on a lock service. It owns its own
// connection or session: no two Lockers share one, because sharing would hide
// the notifications and round trips each client causes.
//
// A Locker is used by one goroutine at a time; only Counters may be read
// concurrently (the progress line does). Cancelling ctx makes a blocked
// Acquire return promptly with ctx.Err(), leaving nothing of its own queued
// on the server.
type Locker interface {
	// Acquire blocks until the named lock is held or ctx is done.
	Acquire(ctx context.Context, name string) (Lease, error)
	// Counters returns this client's counters; the pointer stays valid for
	// the Locker's life.
	Counters() *Counters
	// Close releases the connection or session without waiting for TTLs.
	Close() error
}

// Lease is a held lock. It is valid until Release, until the TTL expires or
// until the session that holds it ends, whichever comes first.
type Lease interface {
	// Fence returns the fencing token of this grant and whether the
	// implementation has one. Tokens grow with grant order per lock name.
	Fence() (token uint64, ok bool)
	// Release gives the lock up. It returns an error wrapping ErrLockLost
	// when the lock had already expired or been taken by someone else.
	Release(ctx context.Context) error
}

// Config carries what every implementation is built from. Zero values mean
// the defaults stated next to each field.
type Config struct {
	Servers Servers
	// TTL is how long a grant lives without release (Redis PX). Default 10s.
	TTL time.Duration
	// Retry is the pause between polling attempts. Default 10ms.
	Retry time.Duration
	// Jitter is the fraction of Retry added or removed at random. Default 0.5.
	Jitter float64
	// SessionTimeout is the ZooKeeper session timeout. Default 10s.
	SessionTimeout time.Duration
	// DialTimeout bounds connecting one client. Default 5s.
	DialTimeout time.Duration
	// Seed makes tokens and jitter repeatable; each client derives its own
	// stream from Seed and Client.
	Seed   uint64
	Client int
	// Namespace is prefixed to every key or node, so that cells never see
	// each other's leftovers.
	Namespace string
	// Options holds implementation-specific settings, e.g. "redlock-mode".
	Options map[string]string
}

// Defaults used when a Config field is zero.
const (
	DefaultTTL            = 10 * time.Second
	DefaultRetry          = 10 * time.Millisecond
	DefaultJitter         = 0.5
	DefaultSessionTimeout = 10 * time.Second
	DefaultDialTimeout    = 5 * time.Second
)

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.TTL <= 0 {
		c.TTL = DefaultTTL
	}
	if c.Retry <= 0 {
		c.Retry = DefaultRetry
	}
	if c.Jitter == 0 {
		c.Jitter = DefaultJitter
	}
	if c.Jitter < 0 {
		c.Jitter = 0
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = DefaultSessionTimeout
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	return c
}

// Servers lists the addresses an implementation may use, by kind of server.
type Servers struct {
	Redis   string   // one Redis for the single-instance lock
	Redlock []string // independent Redis masters
	ZK      []string // one ZooKeeper ensemble
}

// Needs says which servers an implementation needs, so a sandbox can start
// just those.
type Needs struct {
	Redis   bool
	Redlock int // number of masters
	ZK      bool
}

// Herd says how waiters learn that a lock was released, which fixes what
// theory predicts for wake-ups.
type Herd int

const (
	// Polling: waiters poll; no notifications, retries instead.
	Polling Herd = iota
	// WatchAll: every waiter is notified of every change (herd effect).
	WatchAll
	// WatchPredecessor: only the next waiter is notified of a release.
	WatchPredecessor
)

// TheoryWakeups is the number of release wake-ups theory predicts for n
// clients queued on one lock that passes down the queue once: n(n−1)/2 when
// every waiter watches every change, n−1 when each watches its predecessor.
// ok is false for polling implementations, which have no wake-ups.
func TheoryWakeups(h Herd, n int) (wakeups int64, ok bool) {
	N := int64(n)
	switch h {
	case WatchAll:
		return N * (N - 1) / 2, true
	case WatchPredecessor:
		return N - 1, true
	}
	return 0, false
}
