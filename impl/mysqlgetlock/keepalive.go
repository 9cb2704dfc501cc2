package mysqlgetlock

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/impl"
)

// Keepalive returns the TCP keepalive MariaDB keeps on this client's
// connection: its tcp_keepalive_time, _interval and _probes, which are
// server-wide and apply to connections as they are accepted, so want
// cannot be set from a session; 0 means the system's default, given where
// the server is on this host. MySQL has no such variables: the system's
// default applies. wait_timeout, which also ends a connection idle for
// that long, is named in Source.
func (l *Locker) Keepalive(ctx context.Context, _ impl.Keepalive) (impl.Keepalive, error) {
	if l.conn == nil {
		return impl.Keepalive{}, fmt.Errorf("mysqlgetlock: %s: keepalive: %w: not connected", l.addr, impl.ErrUnreachable)
	}
	var wait int64
	if err := l.conn.QueryRowContext(ctx, "SELECT @@session.wait_timeout").Scan(&wait); err != nil {
		return impl.Keepalive{}, fmt.Errorf("mysqlgetlock: %s: wait_timeout: %w", l.addr, err)
	}
	idleConn := fmt.Sprintf("; wait_timeout %v also ends an idle connection", time.Duration(wait)*time.Second)
	var idle, intvl, probes int64
	err := l.conn.QueryRowContext(ctx, "SELECT @@global.tcp_keepalive_time, @@global.tcp_keepalive_interval, @@global.tcp_keepalive_probes").
		Scan(&idle, &intvl, &probes)
	if err == nil && idle > 0 {
		return impl.Keepalive{Idle: time.Duration(idle) * time.Second, Interval: time.Duration(intvl) * time.Second,
			Count: int(probes), Source: "server-wide tcp_keepalive_*" + idleConn}, nil
	}
	k, ok := impl.SystemKeepalive(l.addr)
	if !ok {
		return impl.Keepalive{Source: "the system's default, not known from here" + idleConn}, nil
	}
	k.Source = "tcp_keepalive_time 0: " + k.Source + idleConn
	return k, nil
}
