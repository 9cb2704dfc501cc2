package pgadvisory

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockbench/lockbench/impl"
)

// observer is one server's queue of advisory-lock waiters, read for the
// clients of this process on a connection of its own: it queries only
// while clients ask (Settled), and closes its connection once nobody has
// asked for observerIdle.
type observer = impl.QueueView[uint32]

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
		o = impl.NewQueueView(observerIdle, func(ctx context.Context) (func(context.Context) ([]uint32, error), func(), error) {
			c, err := connectSide(ctx, side)
			if err != nil {
				return nil, nil, err
			}
			list := func(ctx context.Context) ([]uint32, error) { return waitingPIDs(ctx, c) }
			return list, func() { c.Close(context.Background()) }, nil
		})
		observers[addr] = o
	}
	return o
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
