package impl

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// QueueView is a server's queue of lock waiters as a connection of the
// process's own last read it, for drivers whose waiters queue on the
// server (PostgreSQL's pg_locks, MySQL's processlist): a client's Settled
// asks whether it stands in the queue. It reads only while clients ask,
// on a goroutine of its own that ends, closing what it opened, once nobody
// has asked for idle. It is safe for concurrent use.
type QueueView[ID comparable] struct {
	open func(ctx context.Context) (list func(context.Context) ([]ID, error), done func(), err error)
	idle time.Duration
	poke chan struct{}
	last atomic.Pointer[queueRead[ID]]

	mu      sync.Mutex
	running bool
}

// queueRead is the queue as a read sent at sent (Unix ns) listed it.
type queueRead[ID comparable] struct {
	sent int64
	ids  []ID
}

// NewQueueView returns a view that, when asked, opens what it reads
// through (open returns the read and what closes it) and lists the queue
// with it until it has not been asked for idle.
func NewQueueView[ID comparable](idle time.Duration,
	open func(ctx context.Context) (list func(context.Context) ([]ID, error), done func(), err error)) *QueueView[ID] {
	return &QueueView[ID]{open: open, idle: idle, poke: make(chan struct{}, 1)}
}

// Waiting reports whether the latest read, sent after from (Unix ns),
// lists id; otherwise it asks for a fresh read and says no.
func (q *QueueView[ID]) Waiting(id ID, from int64) bool {
	if v := q.last.Load(); v != nil && v.sent > from && slices.Contains(v.ids, id) {
		return true
	}
	select {
	case q.poke <- struct{}{}:
	default:
	}
	q.mu.Lock()
	if !q.running {
		q.running = true
		go q.run()
	}
	q.mu.Unlock()
	return false
}

func (q *QueueView[ID]) run() {
	defer func() {
		q.mu.Lock()
		q.running = false
		q.mu.Unlock()
	}()
	ctx := context.Background()
	list, done, err := q.open(ctx)
	if err != nil {
		return
	}
	defer done()
	idle := time.NewTimer(q.idle)
	defer idle.Stop()
	for {
		select {
		case <-q.poke:
		case <-idle.C:
			return
		}
		sent := time.Now().UnixNano()
		ids, err := list(ctx)
		if err != nil {
			return
		}
		q.last.Store(&queueRead[ID]{sent: sent, ids: ids})
		idle.Reset(q.idle)
	}
}
