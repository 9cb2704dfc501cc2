// Package inproc is an in-process lock: a one-slot channel per lock name.
// It talks to no server, so it measures nothing about distributed locks; it
// exists to unit-test the harness and to measure the harness's own overhead
// per cycle. Waiters are woken one at a time, like the ZooKeeper recipe.
package inproc

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

func init() {
	impl.Register(impl.Driver{
		Name:        "inproc",
		Recipe:      "a lock with no server: the harness's baseline",
		Description: "in-process lock, no server: the harness's own overhead (baseline)",
		Caps:        impl.Fencing,
		Theory:      &result.WatchPredecessor,
		New:         New,
	})
}

// OptUnsafe, set to "true" in Config.Options, grants every Acquire at once
// without exclusion, so tests can prove the safety checker sees overlaps.
const OptUnsafe = "inproc-unsafe"

type state struct {
	slot  chan struct{}
	token atomic.Uint64
}

var locks sync.Map // namespace/name → *state

// Locker is one in-process client.
type Locker struct {
	ns       string
	unsafe   bool
	counters impl.Counters
	waiting  atomic.Bool
	curName  string
	cur      *state
	lease    lease
}

// New returns a client; it cannot fail.
func New(_ context.Context, cfg impl.Config) (impl.Locker, error) {
	return &Locker{ns: cfg.Namespace, unsafe: cfg.Options[OptUnsafe] == "true"}, nil
}

func (l *Locker) state(name string) *state {
	if l.cur != nil && name == l.curName {
		return l.cur
	}
	s, _ := locks.LoadOrStore(l.ns+"/"+name, &state{slot: make(chan struct{}, 1)})
	l.curName, l.cur = name, s.(*state)
	return l.cur
}

// Acquire takes the lock's slot, waiting in line if it is taken.
func (l *Locker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	s := l.state(name)
	l.counters.RoundTrips.Add(1)
	if l.unsafe {
		l.lease = lease{l: l, s: s, token: s.token.Add(1), unsafe: true}
		return &l.lease, nil
	}
	select {
	case s.slot <- struct{}{}:
	default:
		l.counters.Retries.Add(1)
		l.waiting.Store(true)
		select {
		case s.slot <- struct{}{}:
			l.waiting.Store(false)
			l.counters.Notifications.Add(1)
			l.counters.Wakeups.Add(1)
			l.counters.ReleaseWakeups.Add(1)
		case <-ctx.Done():
			l.waiting.Store(false)
			return nil, ctx.Err()
		}
	}
	l.lease = lease{l: l, s: s, token: s.token.Add(1)}
	return &l.lease, nil
}

// Settled reports whether the client is blocked in line.
func (l *Locker) Settled() bool { return l.waiting.Load() }

// Counters returns this client's counters.
func (l *Locker) Counters() *impl.Counters { return &l.counters }

// Close does nothing: there is no connection.
func (l *Locker) Close() error { return nil }

type lease struct {
	l        *Locker
	s        *state
	token    uint64
	unsafe   bool
	released bool
}

var errDoubleRelease = errors.New("inproc: lease released twice")

func (s *lease) Fence() (uint64, bool) { return s.token, true }

func (s *lease) Release(context.Context) error {
	if s.released {
		return errDoubleRelease
	}
	s.released = true
	s.l.counters.RoundTrips.Add(1)
	if !s.unsafe {
		<-s.s.slot
	}
	return nil
}
