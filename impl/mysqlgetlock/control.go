package mysqlgetlock

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/lockbench/lockbench/impl"
)

// control is the process's side channel to one server: it kills the
// queries of cancelled waiters and lists the waiting connections. It is
// a small pool of its own, outside every client's connection.
type control struct {
	db *sql.DB
	// queue is the connections waiting for a user lock, as SHOW
	// PROCESSLIST last listed them.
	queue *impl.QueueView[int64]
}

var (
	controlsMu sync.Mutex
	controls   = map[string]*control{}
)

// controlFor returns the control of the server at addr.
func controlFor(addr string) (*control, error) {
	controlsMu.Lock()
	defer controlsMu.Unlock()
	if c, ok := controls[addr]; ok {
		return c, nil
	}
	db, err := open(addr, 4, 5*time.Second)
	if err != nil {
		return nil, err
	}
	db.SetConnMaxIdleTime(5 * time.Second)
	c := &control{db: db}
	c.queue = impl.NewQueueView(2*time.Second, func(context.Context) (func(context.Context) ([]int64, error), func(), error) {
		list := func(ctx context.Context) ([]int64, error) { return userLockWaiters(ctx, db) }
		return list, func() {}, nil
	})
	controls[addr] = c
	return c, nil
}

// kill interrupts connection id's running statement.
func (c *control) kill(id int64) {
	ctx, cancel := context.WithTimeout(context.Background(), settleGrace)
	defer cancel()
	c.db.ExecContext(ctx, "KILL QUERY "+strconv.FormatInt(id, 10))
}

// waiting reports whether the latest listing, asked for after from,
// lists connection id; otherwise it asks for a fresh one and says no.
func (c *control) waiting(id, from int64) bool { return c.queue.Waiting(id, from) }

// userLockWaiters lists the connections in state "User lock". SHOW
// PROCESSLIST rather than a SELECT, so that the server's Com_select
// counts only the clients' lock calls.
func userLockWaiters(ctx context.Context, db *sql.DB) ([]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, "SHOW PROCESSLIST")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	idCol, stateCol := slices.Index(cols, "Id"), slices.Index(cols, "State")
	if idCol < 0 || stateCol < 0 {
		return nil, fmt.Errorf("mysqlgetlock: SHOW PROCESSLIST has columns %v", cols)
	}
	var ids []int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		if string(vals[stateCol]) == "User lock" {
			id, _ := strconv.ParseInt(string(vals[idCol]), 10, 64)
			ids = append(ids, id)
		}
	}
	return ids, rows.Err()
}

// LockName is the server's name for name in namespace: both as they are
// when they fit MySQL's 64 characters, hashed where they would not, the
// namespace part first so that a namespace's locks share a prefix.
func LockName(namespace, name string) string {
	p := prefix(namespace)
	if len(p)+len(name) <= 64 {
		return p + name
	}
	return p + hashText(name)
}

// prefix is the namespace part of every lock name: at most 48
// characters, then a separator.
func prefix(namespace string) string {
	if len(namespace) > 47 {
		namespace = hashText(namespace)
	}
	return namespace + "/"
}

func hashText(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 16)
}

// Leftovers counts what the servers hold or queue of namespace: user
// locks held under its prefix (information_schema.METADATA_LOCK_INFO,
// MariaDB's metadata_lock_info plugin, which the sandbox loads) and
// connections waiting in GET_LOCK (the processlist cannot tell whose
// namespace a prepared statement waits on: every waiter counts).
func Leftovers(ctx context.Context, s impl.Servers, namespace string) (int, error) {
	n := 0
	p := prefix(namespace)
	for _, a := range s[Role] {
		c, err := controlFor(a)
		if err != nil {
			return 0, err
		}
		var held int
		err = c.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.METADATA_LOCK_INFO WHERE LOCK_TYPE = 'User lock' AND LEFT(TABLE_SCHEMA, CHAR_LENGTH(?)) = ?", p, p).Scan(&held)
		if err != nil {
			return 0, fmt.Errorf("mysqlgetlock: %s: held user locks (metadata_lock_info plugin): %w", a, err)
		}
		waiting, err := userLockWaiters(ctx, c.db)
		if err != nil {
			return 0, fmt.Errorf("mysqlgetlock: %s: %w", a, err)
		}
		n += held + len(waiting)
	}
	return n, nil
}
