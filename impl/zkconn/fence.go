package zkconn

import (
	"context"
	"errors"
	"fmt"

	gozk "github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/impl"
)

// Set here rather than in Ensemble's declaration: Fence dials through
// Dial, which reads Ensemble, and a declaration may not refer to itself.
// Every package that copies Ensemble imports this one, so it is set before
// any copy is made.
func init() { Ensemble.Fence = Fence }

// Fence opens a fencing counter for lock on the ensemble at addrs, for
// ZooKeeper locks that have no token of their own (one ephemeral node, or
// a library that keeps its sequence to itself): a setData on a node beside
// the lock's, whose data version the server raises by one per write. It is
// Ensemble's impl.FenceFunc.
func Fence(ctx context.Context, cfg impl.Config, addrs []string, lock string) (impl.FenceCounter, error) {
	var c impl.Counters // its round trips are the resource's, not the lock's
	cfg.Servers = impl.Servers{Ensemble.Role: addrs}
	conn, err := Dial(ctx, cfg, &c, nil)
	if err != nil {
		return nil, fmt.Errorf("zk: fencing counter: %w", err)
	}
	return &fence{conn: conn, path: Path(cfg.Namespace, lock) + ".fence"}, nil
}

type fence struct {
	conn *gozk.Conn
	path string
}

func (f *fence) Next(ctx context.Context) (uint64, error) {
	defer Bound(ctx, f.conn)()
	stat, err := f.conn.Set(f.path, nil, -1)
	if errors.Is(err, gozk.ErrNoNode) {
		var c impl.Counters
		if err = EnsurePath(f.conn, f.path, &c); err == nil {
			stat, err = f.conn.Set(f.path, nil, -1)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("zk: fencing counter %s: %w", f.path, err)
	}
	return uint64(stat.Version), nil
}

func (f *fence) Close() error { f.conn.Close(); return nil }
