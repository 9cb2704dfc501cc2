package pgadvisory

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockbench/lockbench/impl"
)

// observer watches one server's queue of advisory-lock waiters for the
// clients of this process, on a connection of its own. It queries only
// while clients ask (Settled), and closes its connection once nobody has
// asked for observerIdle.
type observer struct {
	cc   *pgx.ConnConfig
	poke chan struct{}
	view atomic.Pointer[queueView]

	mu      sync.Mutex
	running bool
}

// queueView is the backends waiting on advisory locks as pg_locks showed
// them to a query sent at sent (unix ns).
type queueView struct {
	sent int64
	pids []uint32
}

const observerIdle = 2 * time.Second

var (
	observersMu sync.Mutex
	observers   = map[string]*observer{}
)

// observerFor returns the observer of the server at addr.
func observerFor(addr string, cc *pgx.ConnConfig) *observer {
	observersMu.Lock()
	defer observersMu.Unlock()
	o, ok := observers[addr]
	if !ok {
		side := cc.Copy()
		side.Database = "template1"
		o = &observer{cc: side, poke: make(chan struct{}, 1)}
		observers[addr] = o
	}
	return o
}

// waiting reports whether the latest view, taken by a query sent after
// from, lists pid; otherwise it asks for a fresh view and says no.
func (o *observer) waiting(pid uint32, from int64) bool {
	if v := o.view.Load(); v != nil && v.sent > from && slices.Contains(v.pids, pid) {
		return true
	}
	select {
	case o.poke <- struct{}{}:
	default:
	}
	o.mu.Lock()
	if !o.running {
		o.running = true
		go o.run()
	}
	o.mu.Unlock()
	return false
}

func (o *observer) run() {
	defer func() {
		o.mu.Lock()
		o.running = false
		o.mu.Unlock()
	}()
	ctx := context.Background()
	c, err := connectSide(ctx, o.cc)
	if err != nil {
		return
	}
	defer c.Close(ctx)
	idle := time.NewTimer(observerIdle)
	defer idle.Stop()
	for {
		select {
		case <-o.poke:
		case <-idle.C:
			return
		}
		sent := time.Now().UnixNano()
		pids, err := waitingPIDs(ctx, c)
		if err != nil {
			return
		}
		o.view.Store(&queueView{sent: sent, pids: pids})
		idle.Reset(observerIdle)
	}
}

// connectSide connects on template1, or on the clients' own database if
// template1 is refused (a managed server may not let users in there).
func connectSide(ctx context.Context, cc *pgx.ConnConfig) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if c, err := pgx.ConnectConfig(ctx, cc); err == nil {
		return c, nil
	}
	own, err := pgx.ParseConfig(cc.ConnString())
	if err != nil {
		return nil, err
	}
	return pgx.ConnectConfig(ctx, own)
}

// waitingPIDs lists the backends waiting for an advisory lock, oldest
// wait first.
func waitingPIDs(ctx context.Context, c *pgx.Conn) ([]uint32, error) {
	rows, err := c.Query(ctx, "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted ORDER BY waitstart NULLS LAST")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (uint32, error) {
		var pid int32
		err := r.Scan(&pid)
		return uint32(pid), err
	})
}

// Leftovers counts the advisory locks held or awaited under namespace on
// the servers (pg_locks rows whose first key is the namespace's): what a
// cell left behind. It is the drivers' Residue and the conformance
// suite's count.
func Leftovers(ctx context.Context, s impl.Servers, namespace string) (int, error) {
	n := 0
	for _, a := range s[Role] {
		cc, err := connConfig(a, 5*time.Second)
		if err != nil {
			return 0, err
		}
		cc.Database = "template1"
		c, err := connectSide(ctx, cc)
		if err != nil {
			return 0, fmt.Errorf("pgadvisory: %s: %w: %v", a, impl.ErrUnreachable, err)
		}
		var k int
		err = c.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND classid::int8 = $1",
			int64(uint32(hash32(namespace)))).Scan(&k)
		c.Close(ctx)
		if err != nil {
			return 0, fmt.Errorf("pgadvisory: %s: %w", a, err)
		}
		n += k
	}
	return n, nil
}
