package redisfair

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
)

// subscription is a client's subscription connection, as a Redisson
// instance keeps one beside its command connection. One goroutine reads
// it for the client's life and counts every message the moment it arrives,
// before the waiter sees it, so that Settled can tell a message delivered
// but unread from none at all.
//
// It listens on one channel at a time, the current Acquire's own; a
// message on any other (a channel an earlier Acquire has left, whose
// unsubscription is still on its way) is counted and dropped. On a
// cluster it keeps a connection to each master, each with its reader,
// and listens on the one of the channel's slot; the state below is the
// one listening's, whichever connection carries it.
type subscription struct {
	subs *redis.Subscribers
	ps   *goredis.PubSub // the connection of the channel listened on
	c    *impl.Counters
	dur  time.Duration // bound on a server's confirmation

	subKind string // the confirmation of (S)SUBSCRIBE

	mu        sync.Mutex
	want      string // the channel listened on, "" between Acquires
	confirmed bool   // the server confirmed the subscription to want
	pending   int64  // messages on want not yet taken
	pongs     int64  // PING replies, for New's check of the connection

	// wake is poked after every change above, so that a waiter that
	// looked and found nothing sleeps on it without missing one.
	wake chan struct{}

	// armed is set while the waiter blocks for a message, and taken counts
	// the messages it has taken (dropped ones included): with
	// Counters.Notifications, which the reader counts first, they make
	// Settled.
	armed atomic.Bool
	taken atomic.Int64

	stop    context.CancelFunc // ends the readers' reconnects
	stopped chan struct{}      // closed when Close begins
	readers sync.WaitGroup     // the readers, one per connection
}

// Pauses between the reader's attempts to reconnect a lost connection.
const (
	minReconnectPause = 10 * time.Millisecond
	maxReconnectPause = time.Second
)

// newSubscription opens the subscription connections beside cmds (one,
// or one to each master of a cluster) and returns once the server has
// answered on each, so that the dials are out of every measurement.
func newSubscription(ctx context.Context, cfg impl.Config, cmds redis.Commands, c *impl.Counters) (*subscription, error) {
	subs, err := redis.OpenSubscribers(ctx, cfg, cmds)
	if err != nil {
		return nil, err
	}
	rctx, stop := context.WithCancel(context.Background())
	s := &subscription{
		subs: subs, c: c, dur: cfg.DialTimeout,
		wake: make(chan struct{}, 1), stop: stop,
		stopped: make(chan struct{}),
	}
	s.subKind, _ = subs.Kinds()
	for _, ps := range subs.Conns {
		s.readers.Add(1)
		go s.read(rctx, ps)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	for _, ps := range subs.Conns {
		c.RoundTrips.Add(1)
		if err = ps.Ping(ctx); err != nil {
			break
		}
	}
	if err == nil {
		err = s.await(ctx, func() bool { return s.pongs >= int64(len(subs.Conns)) })
	}
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// read receives until the subscription is closed. A lost connection is
// made again by go-redis on the next receive, with its channels
// subscribed again; a message published meanwhile is lost, and the waiter
// finds out at the end of its wait, as a Redisson client would.
func (s *subscription) read(ctx context.Context, ps *goredis.PubSub) {
	defer s.readers.Done()
	pause := minReconnectPause
	for {
		msg, err := ps.Receive(ctx)
		if err != nil {
			select {
			case <-s.stopped:
				return
			case <-time.After(pause):
			}
			pause = min(2*pause, maxReconnectPause)
			continue
		}
		pause = minReconnectPause
		s.deliver(msg)
	}
}

// deliver records what the reader received and pokes the waiter.
func (s *subscription) deliver(msg any) {
	s.mu.Lock()
	switch m := msg.(type) {
	case *goredis.Message:
		s.c.Notifications.Add(1)
		if m.Channel == s.want && s.want != "" {
			s.pending++
		} else {
			s.taken.Add(1) // a channel left behind: nobody will take it
		}
	case *goredis.Subscription:
		if m.Kind == s.subKind && m.Channel == s.want {
			s.confirmed = true
		}
	case *goredis.Pong:
		s.pongs++
	}
	s.mu.Unlock()
	s.poke()
}

func (s *subscription) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// await blocks until ready, read under the lock, holds, or ctx is done.
func (s *subscription) await(ctx context.Context, ready func() bool) error {
	for {
		s.mu.Lock()
		ok := ready()
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// errUnconfirmed says the server never confirmed a subscription.
var errUnconfirmed = errors.New("redis-fair: subscription not confirmed")

// subscribe listens on ch and returns once the server has confirmed it:
// go-redis's Subscribe returns as soon as the command is written, and a
// message published before the server takes it would be lost. A server
// that does not confirm within the dial timeout counts as unreachable.
func (s *subscription) subscribe(ctx context.Context, ch string) error {
	ps, err := s.subs.For(ctx, ch)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.want, s.confirmed, s.pending, s.ps = ch, false, 0, ps
	s.mu.Unlock()
	s.c.RoundTrips.Add(1)
	if err := s.subs.Subscribe(ctx, ps, ch); err != nil {
		return err
	}
	bctx, cancel := context.WithTimeout(ctx, s.dur)
	defer cancel()
	err = s.await(bctx, func() bool { return s.confirmed })
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("%w: %w within %v", impl.ErrUnreachable, errUnconfirmed, s.dur)
	}
	return err
}

// unsubscribe stops listening on ch. The command is written, not
// awaited: its confirmation, and any message that overtakes it, is read
// and dropped by the reader. Messages not taken are dropped too.
func (s *subscription) unsubscribe(ctx context.Context, ch string) {
	s.mu.Lock()
	s.taken.Add(s.pending)
	s.want, s.confirmed, s.pending = "", false, 0
	ps := s.ps
	s.mu.Unlock()
	if ps == nil {
		return
	}
	s.c.RoundTrips.Add(1)
	ctx, cancel := redis.Uncancelled(ctx)
	defer cancel()
	s.subs.Unsubscribe(ctx, ps, ch)
}

// wait blocks until a message arrives on the current channel (true), t
// fires after d (false), or ctx is done.
func (s *subscription) wait(ctx context.Context, t *time.Timer, d time.Duration) (bool, error) {
	t.Reset(d)
	defer t.Stop()
	s.armed.Store(true)
	defer s.armed.Store(false)
	for {
		if s.take() > 0 {
			return true, nil
		}
		select {
		case <-s.wake:
		case <-t.C:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// take takes every message waiting on the current channel.
func (s *subscription) take() int64 {
	s.mu.Lock()
	n := s.pending
	s.pending = 0
	s.mu.Unlock()
	s.taken.Add(n)
	return n
}

// settled reports whether the waiter is blocked for a message and every
// message the connection received has been taken.
func (s *subscription) settled() bool {
	return s.armed.Load() && s.c.Notifications.Load() == s.taken.Load()
}

// close ends the reader and the connection without waiting for a reply.
func (s *subscription) close() error {
	close(s.stopped)
	s.stop()
	err := s.subs.Close()
	s.readers.Wait()
	return err
}
