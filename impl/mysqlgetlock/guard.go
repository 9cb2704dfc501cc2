package mysqlgetlock

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/lockbench/lockbench/impl"
)

// The guarded register (impl.Guard) on MySQL/MariaDB: a row per lock in
// the InnoDB table lockbench_guard (created when missing, in the
// connection's database or else in a database lockbench), holding the
// unfenced and fenced counters and the highest token seen. MySQL has no
// UPDATE … RETURNING, so each access is a short transaction that reads the
// row under its lock (FOR UPDATE, or the upsert's own) and writes it: the
// fence check and the values replaced are taken in the same step as the
// write, as the other kinds' registers take them.
const (
	guardCreate = `CREATE TABLE IF NOT EXISTS %s (
  name varchar(255) PRIMARY KEY, unfenced bigint NOT NULL, fenced bigint NOT NULL, highest bigint NOT NULL) ENGINE=InnoDB`
	guardUpsert = `INSERT INTO %s (name, unfenced, fenced, highest) VALUES (?, 0, 0, ?)
ON DUPLICATE KEY UPDATE highest = GREATEST(highest, VALUES(highest))`
	guardSelect = `SELECT unfenced, fenced, highest FROM %s WHERE name = ?`
	guardUpdate = `UPDATE %s SET unfenced = ?, fenced = ?, highest = ? WHERE name = ?`
)

// Guard opens the guarded register on the server at addrs[0], on a
// connection of its own. It is the mysql role's impl.GuardFunc.
func Guard(ctx context.Context, cfg impl.Config, addrs []string) (impl.Guard, error) {
	if len(addrs) != 1 {
		return nil, fmt.Errorf("mysqlgetlock: guarded register: want one MySQL server, got %d", len(addrs))
	}
	cfg = cfg.WithDefaults()
	db, err := open(addrs[0], 1, cfg.DialTimeout)
	if err != nil {
		return nil, err
	}
	g := &guard{db: db, ns: cfg.Namespace}
	if err := g.prepare(ctx, cfg); err != nil {
		db.Close()
		return nil, err
	}
	return g, nil
}

type guard struct {
	db    *sql.DB
	conn  *sql.Conn
	table string
	ns    string
}

// prepare pins the connection and creates the table unless it exists,
// under a named lock: clients open their registers side by side.
func (g *guard) prepare(ctx context.Context, cfg impl.Config) error {
	dctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	c, err := g.db.Conn(dctx)
	if err != nil {
		return fmt.Errorf("mysqlgetlock: guarded register: %w: %v", impl.ErrUnreachable, err)
	}
	g.conn = c
	var db sql.NullString
	if err := c.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&db); err != nil {
		return fmt.Errorf("mysqlgetlock: guarded register: %w", err)
	}
	g.table = "lockbench_guard"
	if !db.Valid || db.String == "" {
		if _, err := c.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS lockbench"); err != nil {
			return fmt.Errorf("mysqlgetlock: guarded register: create its database: %w", err)
		}
		g.table = "lockbench.lockbench_guard"
	}
	var got sql.NullInt64
	if err := c.QueryRowContext(ctx, "SELECT GET_LOCK('lockbench.guard', 30)").Scan(&got); err != nil || got.Int64 != 1 {
		return fmt.Errorf("mysqlgetlock: guarded register: lock its creation: %v (got %v)", err, got)
	}
	_, err = c.ExecContext(ctx, fmt.Sprintf(guardCreate, g.table))
	c.ExecContext(ctx, "DO RELEASE_LOCK('lockbench.guard')")
	if err != nil {
		return fmt.Errorf("mysqlgetlock: guarded register: create its table: %w", err)
	}
	return nil
}

func (g *guard) name(lock string) string { return g.ns + "/" + lock }

// inTx runs f in a transaction on the pinned connection.
func (g *guard) inTx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := g.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (g *guard) Read(ctx context.Context, lock string, token uint64) (impl.Reading, error) {
	var r impl.Reading
	err := g.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(guardUpsert, g.table), g.name(lock), int64(token)); err != nil {
			return err
		}
		var highest int64
		if err := tx.QueryRowContext(ctx, fmt.Sprintf(guardSelect, g.table), g.name(lock)).Scan(&r.Unfenced, &r.Fenced, &highest); err != nil {
			return err
		}
		r.Refused = highest > int64(token)
		return nil
	})
	if err != nil {
		return impl.Reading{}, fmt.Errorf("mysqlgetlock: guarded register %s: read: %w", lock, err)
	}
	return r, nil
}

func (g *guard) Write(ctx context.Context, lock string, token uint64, r impl.Reading) (impl.Written, error) {
	var w impl.Written
	err := g.inTx(ctx, func(tx *sql.Tx) error {
		var cu, cf, h int64
		err := tx.QueryRowContext(ctx, fmt.Sprintf(guardSelect, g.table)+" FOR UPDATE", g.name(lock)).Scan(&cu, &cf, &h)
		if errors.Is(err, sql.ErrNoRows) {
			return errors.New("no row: written before it was read")
		}
		if err != nil {
			return err
		}
		w.UnfencedMoved = cu - r.Unfenced
		fenced := cf
		if !r.Refused && int64(token) >= h {
			w.FencedAccepted, w.FencedMoved = true, cf-r.Fenced
			fenced, h = r.Fenced+1, max(h, int64(token))
		}
		_, err = tx.ExecContext(ctx, fmt.Sprintf(guardUpdate, g.table), r.Unfenced+1, fenced, h, g.name(lock))
		return err
	})
	if err != nil {
		return impl.Written{}, fmt.Errorf("mysqlgetlock: guarded register %s: write: %w", lock, err)
	}
	return w, nil
}

func (g *guard) Values(ctx context.Context, lock string) (fenced, unfenced int64, err error) {
	var h int64
	err = g.conn.QueryRowContext(ctx, fmt.Sprintf(guardSelect, g.table), g.name(lock)).Scan(&unfenced, &fenced, &h)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("mysqlgetlock: guarded register %s: %w", lock, err)
	}
	return fenced, unfenced, nil
}

func (g *guard) Close() error {
	g.conn.Close()
	return g.db.Close()
}
