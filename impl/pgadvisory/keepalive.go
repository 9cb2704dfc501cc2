package pgadvisory

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockbench/lockbench/impl"
)

// Keepalive sets, where want says, PostgreSQL's tcp_keepalives_idle,
// _interval and _count on this client's session — the server applies them
// to its end of the connection — and returns what is in force, as the
// server reports it (its default is the system's).
func (l *Locker) Keepalive(ctx context.Context, want impl.Keepalive) (impl.Keepalive, error) {
	if l.conn == nil || l.conn.IsClosed() {
		return impl.Keepalive{}, fmt.Errorf("pgadvisory: %s: keepalive: %w: not connected", l.addr, impl.ErrUnreachable)
	}
	source := "tcp_keepalives_* in force on the session"
	set := map[string]int{"idle": int(want.Idle / time.Second), "interval": int(want.Interval / time.Second), "count": want.Count}
	for _, name := range []string{"idle", "interval", "count"} {
		if v := set[name]; v > 0 {
			q := fmt.Sprintf("SET tcp_keepalives_%s = %d", name, v)
			if _, err := l.conn.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol); err != nil {
				return impl.Keepalive{}, fmt.Errorf("pgadvisory: %s: %s: %w", l.addr, q, err)
			}
			source = "tcp_keepalives_* set on the session"
		}
	}
	var k impl.Keepalive
	for _, name := range []string{"idle", "interval", "count"} {
		var v string
		if err := l.conn.QueryRow(ctx, "SELECT current_setting($1)", "tcp_keepalives_"+name).Scan(&v); err != nil {
			return impl.Keepalive{}, fmt.Errorf("pgadvisory: %s: tcp_keepalives_%s: %w", l.addr, name, err)
		}
		switch name {
		case "count":
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return impl.Keepalive{}, fmt.Errorf("pgadvisory: %s: tcp_keepalives_count %q", l.addr, v)
			}
			k.Count = n
		default:
			d, err := pgSeconds(v)
			if err != nil {
				return impl.Keepalive{}, fmt.Errorf("pgadvisory: %s: tcp_keepalives_%s: %w", l.addr, name, err)
			}
			if name == "idle" {
				k.Idle = d
			} else {
				k.Interval = d
			}
		}
	}
	k.Source = source
	return k, nil
}

// pgSeconds reads a PostgreSQL setting in seconds as SHOW prints it: "75",
// "75s", "2h", "1min".
func pgSeconds(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	for unit, d := range map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour} {
		if n, err := strconv.Atoi(strings.TrimSuffix(v, unit)); err == nil && strings.HasSuffix(v, unit) {
			return time.Duration(n) * d, nil
		}
	}
	return 0, fmt.Errorf("not a number of seconds: %q", v)
}
