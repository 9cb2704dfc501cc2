package zkephemeral

import (
	"context"
	"errors"

	gozk "github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/zkconn"
)

// Residue counts the lock nodes a cell left under its namespace: each an
// ephemeral node some session still holds.
func Residue(ctx context.Context, s impl.Servers, namespace string) (int, error) {
	var c impl.Counters
	conn, err := zkconn.Dial(ctx, impl.Config{Servers: s}, &c, nil)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	defer zkconn.Bound(ctx, conn)()
	ns := zkconn.Path(namespace, "")
	kids, _, err := conn.Children(ns[:len(ns)-1])
	if errors.Is(err, gozk.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, zkconn.Wrap("residue", err)
	}
	return len(kids), nil
}
