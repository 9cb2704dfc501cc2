package redispubsub

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
)

// eventBuffer is how many pub/sub replies the reader may hand on before
// Acquire takes them. Only confirmations and messages of the one channel a
// client listens to arrive, and it listens only inside Acquire.
const eventBuffer = 64

// readPause and readPauseMax bound the reader's pause after the
// subscription connection failed: go-redis re-makes the connection, and
// re-subscribes its channels, on the next read, and a server that is down
// is not to be dialled in a tight loop by every client. The pause doubles
// with each failure in a row.
const (
	readPause    = 10 * time.Millisecond
	readPauseMax = time.Second
)

// openSubscription makes the subscription connections (one, or one to
// each master of a cluster) and starts their readers: a PING on each,
// answered, says they work.
func (l *Locker) openSubscription(ctx context.Context, cfg impl.Config) error {
	subs, err := redis.OpenSubscribers(ctx, cfg, l.cl)
	if err != nil {
		return fmt.Errorf("redis-pubsub %s: %w: subscription connection: %w", l.addr, impl.ErrUnreachable, err)
	}
	l.subs = subs
	l.subKind, l.unsubKind = subs.Kinds()
	for _, ps := range subs.Conns {
		l.counters.RoundTrips.Add(1)
		if err := ps.Ping(ctx); err != nil {
			return fmt.Errorf("redis-pubsub %s: %w: subscription connection: %w", l.addr, impl.ErrUnreachable, err)
		}
		go l.read(ps)
	}
	for pongs := 0; pongs < len(subs.Conns); {
		select {
		case ev := <-l.events:
			if _, ok := ev.(*goredis.Pong); ok {
				pongs++
			}
		case <-ctx.Done():
			return fmt.Errorf("redis-pubsub %s: %w: subscription connection: %w", l.addr, impl.ErrUnreachable, ctx.Err())
		}
	}
	return nil
}

// read is a subscription connection's reader, for the Locker's life. It
// counts each message as it arrives, before Acquire can see it, so that
// there is no moment at which a message has arrived and the client still
// looks settled (see Settled).
func (l *Locker) read(ps *goredis.PubSub) {
	pause := readPause
	for {
		v, err := ps.Receive(context.Background())
		if err != nil {
			t := time.NewTimer(pause)
			select {
			case <-l.closing:
				t.Stop()
				return
			case <-t.C:
				pause = min(2*pause, readPauseMax)
				continue
			}
		}
		pause = readPause
		if _, ok := v.(*goredis.Message); ok {
			l.counters.Notifications.Add(1)
		}
		select {
		case l.events <- v:
		case <-l.closing:
			return
		}
	}
}

// subscribe subscribes to ch and waits for the server to confirm it, or
// for ctx's end. go-redis's Subscribe returns once the command is written;
// a try made before the confirmation could miss a release. The command is
// written on a context ctx does not cut short: a write that timed out
// would cost the subscription connection, which go-redis then re-makes.
func (l *Locker) subscribe(ctx context.Context, ch string, pub *atomic.Int64) error {
	wctx, cancel := redis.Uncancelled(ctx)
	defer cancel()
	ps, err := l.subs.For(ctx, ch)
	if err != nil {
		return fmt.Errorf("redis-pubsub %s: %w", l.addr, err)
	}
	l.cur = ps
	l.counters.RoundTrips.Add(1)
	if err := l.subs.Subscribe(wctx, ps, ch); err != nil {
		if impl.Expired(ctx) {
			return impl.CtxErr(ctx)
		}
		return redis.Classify(l.addr, err)
	}
	if err := l.confirm(ctx, l.subKind, ch); err != nil {
		return err
	}
	l.base.Store(pub.Load())
	l.recv.Store(0)
	l.pub.Store(pub)
	return nil
}

// unsubscribe unsubscribes from ch and waits, on a context ctx's end does
// not cut short, for the confirmation: a holder that were still subscribed
// when it released would receive its own message. Messages that arrive
// before the confirmation are taken off and dropped.
func (l *Locker) unsubscribe(ctx context.Context, ch string) error {
	uctx, cancel := redis.Uncancelled(ctx)
	defer cancel()
	if l.cur == nil {
		return nil
	}
	l.counters.RoundTrips.Add(1)
	if err := l.subs.Unsubscribe(uctx, l.cur, ch); err != nil {
		return err
	}
	return l.confirm(uctx, l.unsubKind, ch)
}

// confirm waits for the server's confirmation of kind for ch. Any message
// taken off meanwhile is dropped: it was sent before the subscription
// began (none can be) or before it ended.
func (l *Locker) confirm(ctx context.Context, kind, ch string) error {
	for {
		select {
		case ev := <-l.events:
			switch ev := ev.(type) {
			case *goredis.Message:
				l.consumed.Add(1)
			case *goredis.Subscription:
				if ev.Kind == kind && ev.Channel == ch {
					return nil
				}
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// wait waits for a message on ch or for pttl, whichever comes first, and
// reports whether a message woke it. A PTTL that ran out is counted: the
// release was missed, or the holder died and its key expired.
func (l *Locker) wait(ctx context.Context, ch string, pttl time.Duration, measured bool) (bool, error) {
	if pttl < 0 { // a key without expiry: look again after a lease
		pttl = l.cfg.TTL
	}
	l.timer.Reset(pttl)
	l.armed.Store(true)
	defer l.armed.Store(false)
	for {
		select {
		case ev := <-l.events:
			m, ok := ev.(*goredis.Message)
			if !ok { // a resubscription after a reconnect
				continue
			}
			if m.Channel != ch { // left over from an earlier channel
				l.consumed.Add(1)
				continue
			}
			// Disarmed before the message counts as taken: see Settled.
			l.armed.Store(false)
			l.consumed.Add(1)
			l.recv.Add(1)
			l.timer.Stop()
			l.counters.Wakeups.Add(1)
			l.counters.ReleaseWakeups.Add(1)
			return true, nil
		case <-l.timer.C:
			if measured {
				l.stats.pttlWait(pttl)
			}
			return false, nil
		case <-ctx.Done():
			l.timer.Stop()
			return false, ctx.Err()
		}
	}
}

// Settled reports whether Acquire is waiting on its subscription with no
// message delivered but not yet acted on: none arrived that it has not
// taken (the reader counts a message before handing it on), and it has
// received every release this process published on the channel since it
// subscribed, so that a release whose message is still on its way to it
// does not count as seen. The reads run in the reverse order of the
// waiter's writes when it takes a message (disarm, consumed, recv), so
// that a waiter caught in the middle never looks settled.
func (l *Locker) Settled() bool {
	recv := l.recv.Load()
	consumed := l.consumed.Load()
	if l.counters.Notifications.Load() != consumed || !l.armed.Load() {
		return false
	}
	pub := l.pub.Load()
	return pub == nil || recv+l.base.Load() >= pub.Load()
}
