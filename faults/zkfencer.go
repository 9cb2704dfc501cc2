package faults

import (
	"context"
	"errors"
	"fmt"

	gozk "github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/zk"
	"github.com/lockbench/lockbench/impl/zkconn"
)

// zkFencer hands out fencing tokens for ZooKeeper locks that have none of
// their own (zk.Lock keeps its sequence to itself; one ephemeral node has
// none): a setData on a counter node beside the lock's, whose data version
// the server raises by one per write. Like the Redis fencer, it is a
// second round trip after the grant.
type zkFencer struct {
	conn *gozk.Conn
	path string
}

func newZKFencer(ctx context.Context, addrs []string, cfg impl.Config, lock string) (*zkFencer, error) {
	var c impl.Counters // its round trips are the resource's, not the lock's
	cfg.Servers = impl.Servers{zk.Ensemble.Role: addrs}
	conn, err := zkconn.Dial(ctx, cfg, &c, nil)
	if err != nil {
		return nil, fmt.Errorf("faults: fencing counter: %w", err)
	}
	return &zkFencer{conn: conn, path: zkconn.Path(cfg.Namespace, lock) + ".fence"}, nil
}

// Next draws the next token.
func (f *zkFencer) Next(ctx context.Context) (uint64, error) {
	defer zkconn.Bound(ctx, f.conn)()
	stat, err := f.conn.Set(f.path, nil, -1)
	if errors.Is(err, gozk.ErrNoNode) {
		var c impl.Counters
		if err = zkconn.EnsurePath(f.conn, f.path, &c); err == nil {
			stat, err = f.conn.Set(f.path, nil, -1)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("faults: fencing counter %s: %w", f.path, err)
	}
	return uint64(stat.Version), nil
}

func (f *zkFencer) Close() error { f.conn.Close(); return nil }
