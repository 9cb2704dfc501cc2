package pgadvisory

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/lockbench/lockbench/impl"
)

// The guarded register (impl.Guard) on PostgreSQL: a row per lock in the
// table lockbench_guard (created when missing) holding the unfenced and
// fenced counters and the highest token seen. Each access is one
// statement, its fence check and the values it replaces read under the
// row's lock in the same step: the old values come from a sub-select FOR
// UPDATE, which under READ COMMITTED re-reads the row once a concurrent
// writer commits.
const (
	guardTable = `CREATE TABLE IF NOT EXISTS lockbench_guard (
  name text PRIMARY KEY, unfenced bigint NOT NULL, fenced bigint NOT NULL, highest bigint NOT NULL)`
	// guardRead raises the highest token to $2 and returns the counters
	// and the highest after it: above $2, the read is refused.
	guardRead = `INSERT INTO lockbench_guard AS g (name, unfenced, fenced, highest) VALUES ($1, 0, 0, $2)
ON CONFLICT (name) DO UPDATE SET highest = GREATEST(g.highest, EXCLUDED.highest)
RETURNING g.unfenced, g.fenced, g.highest`
	// guardWrite writes unfenced = $3 + 1, and fenced = $4 + 1 when $5
	// and $2 is not below the highest token; it returns how far each
	// counter had moved from $3 and $4, and whether the fenced one took it.
	guardWrite = `UPDATE lockbench_guard g SET unfenced = $3 + 1,
  fenced = CASE WHEN $5 AND $2 >= o.highest THEN $4 + 1 ELSE g.fenced END,
  highest = CASE WHEN $5 AND $2 > o.highest THEN $2 ELSE g.highest END
FROM (SELECT unfenced, fenced, highest FROM lockbench_guard WHERE name = $1 FOR UPDATE) o
WHERE g.name = $1
RETURNING o.unfenced - $3, $5 AND $2 >= o.highest, CASE WHEN $5 AND $2 >= o.highest THEN o.fenced - $4 ELSE 0 END`
	guardValues = `SELECT fenced, unfenced FROM lockbench_guard WHERE name = $1`
)

// Guard opens the guarded register on the PostgreSQL server at addrs[0],
// on a connection of its own. It is need's impl.GuardFunc: pg-advisory,
// pg-try and pg-xact share it.
func Guard(ctx context.Context, cfg impl.Config, addrs []string) (impl.Guard, error) {
	if len(addrs) != 1 {
		return nil, fmt.Errorf("pgadvisory: guarded register: want one PostgreSQL server, got %d", len(addrs))
	}
	cfg = cfg.WithDefaults()
	cc, err := connConfig(addrs[0], cfg.DialTimeout)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	c, err := pgx.ConnectConfig(dctx, cc)
	if err != nil {
		return nil, fmt.Errorf("pgadvisory: guarded register: %w: %v", impl.ErrUnreachable, err)
	}
	if err := createGuardTable(ctx, c); err != nil {
		c.Close(context.Background())
		return nil, err
	}
	return &guard{c: c, ns: cfg.Namespace}, nil
}

// createGuardTable creates lockbench_guard unless it exists. Clients open
// their registers side by side, and two CREATE TABLE IF NOT EXISTS racing
// can both pass the check and one then fail on the catalogue's unique
// index: a transaction-scoped advisory lock takes them in turn.
func createGuardTable(ctx context.Context, c *pgx.Conn) error {
	err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, guardTableLock); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, guardTable)
		return err
	})
	if err != nil {
		return fmt.Errorf("pgadvisory: guarded register: create its table: %w", err)
	}
	return nil
}

// guardTableLock is the advisory lock key createGuardTable takes: one
// no lock row of lockbench's uses (those take two int32 keys).
const guardTableLock int64 = 0x6c6f636b62656e63 // "lockbenc"

type guard struct {
	c  *pgx.Conn
	ns string
}

func (g *guard) name(lock string) string { return g.ns + "/" + lock }

func (g *guard) Read(ctx context.Context, lock string, token uint64) (impl.Reading, error) {
	var r impl.Reading
	var highest int64
	if err := g.c.QueryRow(ctx, guardRead, g.name(lock), int64(token)).Scan(&r.Unfenced, &r.Fenced, &highest); err != nil {
		return impl.Reading{}, fmt.Errorf("pgadvisory: guarded register %s: read: %w", lock, err)
	}
	r.Refused = highest > int64(token)
	return r, nil
}

func (g *guard) Write(ctx context.Context, lock string, token uint64, r impl.Reading) (impl.Written, error) {
	var w impl.Written
	err := g.c.QueryRow(ctx, guardWrite, g.name(lock), int64(token), r.Unfenced, r.Fenced, !r.Refused).
		Scan(&w.UnfencedMoved, &w.FencedAccepted, &w.FencedMoved)
	if errors.Is(err, pgx.ErrNoRows) {
		err = errors.New("no row: written before it was read")
	}
	if err != nil {
		return impl.Written{}, fmt.Errorf("pgadvisory: guarded register %s: write: %w", lock, err)
	}
	return w, nil
}

func (g *guard) Values(ctx context.Context, lock string) (fenced, unfenced int64, err error) {
	err = g.c.QueryRow(ctx, guardValues, g.name(lock)).Scan(&fenced, &unfenced)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("pgadvisory: guarded register %s: %w", lock, err)
	}
	return fenced, unfenced, nil
}

func (g *guard) Close() error { return g.c.Close(context.Background()) }
