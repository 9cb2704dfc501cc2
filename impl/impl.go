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
	// Clients is how many clients the cell connects, 0 when unknown (a
	// cleanup's own connection): a driver may size per-client buffers by
	// it — the queue a waiter reads grows with it.
	Clients int
	// Namespace is prefixed to every key or node, so that cells never see
	// each other's leftovers.
	Namespace string
	// Options holds the values of the options drivers and scenarios
	// declare (Option), by name; a missing one has its declared default.
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

// Servers maps each server role a driver declares (Need.Role: "redis",
// "zk", …) to the addresses it uses. The CLI fills it from the address
// flags, or the sandbox from the servers it starts.
type Servers map[string][]string

// Clone returns a copy of s that shares no slice with it.
func (s Servers) Clone() Servers {
	out := make(Servers, len(s))
	for k, v := range s {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// With returns a copy of s with role's addresses replaced by addrs.
func (s Servers) With(role string, addrs []string) Servers {
	out := s.Clone()
	out[role] = append([]string(nil), addrs...)
	return out
}

// Trier is a Locker that can also ask for a lock once without waiting, as
// Redisson's tryLock(0) and Curator's acquire(0, …) do. Where a Locker
// offers it, a cell's client tries before it waits, so that the recorded
// history shows what a try sees: a release that did not release shows as
// a try that finds the lock held with nobody holding it.
type Trier interface {
	// Try returns a lease, or an error wrapping ErrHeld when the lock is
	// held, without waiting.
	Try(ctx context.Context, name string) (Lease, error)
}
