package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/internal/serverkind"
)

func init() { registerBoard(serverkind.ZooKeeper, openZK) }

// zkBoard keeps its keys as nodes under /lockbench-shard/<run>; a passing
// key is an ephemeral node, gone with the session.
type zkBoard struct {
	c     *zk.Conn
	root  string
	addrs string
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

func openZK(ctx context.Context, addrs []string, run string) (Board, error) {
	c, ev, err := zk.Connect(addrs, 10*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		return nil, fmt.Errorf("shard: zk %s: %w", strings.Join(addrs, ","), err)
	}
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case e := <-ev:
			if e.State != zk.StateHasSession {
				continue
			}
			b := &zkBoard{c: c, root: "/lockbench-shard/" + run, addrs: strings.Join(addrs, ",")}
			if err := b.ensure(b.root); err != nil {
				c.Close()
				return nil, err
			}
			return b, nil
		case <-t.C:
			err = errors.New("no session within 10s")
		case <-ctx.Done():
			err = ctx.Err()
		}
		c.Close()
		return nil, fmt.Errorf("shard: zk %s: %w", strings.Join(addrs, ","), err)
	}
}

func (b *zkBoard) path(key string) string {
	return b.root + "/" + strings.ReplaceAll(key, "/", "_")
}

func (b *zkBoard) ensure(p string) error {
	cur := ""
	for _, part := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		cur += "/" + part
		if _, err := b.c.Create(cur, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("shard: zk create %s: %w", cur, err)
		}
	}
	return nil
}

func (b *zkBoard) Put(_ context.Context, key, value string, passing bool) error {
	p := b.path(key)
	var flags int32
	if passing {
		flags = zk.FlagEphemeral
	}
	_, err := b.c.Create(p, []byte(value), flags, zk.WorldACL(zk.PermAll))
	if errors.Is(err, zk.ErrNodeExists) {
		_, err = b.c.Set(p, []byte(value), -1)
	}
	if err != nil {
		return fmt.Errorf("shard: zk put %s: %w", p, err)
	}
	return nil
}

func (b *zkBoard) Get(_ context.Context, key string) (string, bool, error) {
	v, _, err := b.c.Get(b.path(key))
	if errors.Is(err, zk.ErrNoNode) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("shard: zk get: %w", err)
	}
	return string(v), true, nil
}

// Clock writes a node and reads back its mtime: the server's clock, in
// milliseconds, when it applied the write.
func (b *zkBoard) Clock(_ context.Context) (time.Time, time.Duration, error) {
	st, err := b.c.Set(b.root, nil, -1)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("shard: zk clock: %w", err)
	}
	return time.UnixMilli(st.Mtime), time.Millisecond, nil
}

func (b *zkBoard) Close() error   { b.c.Close(); return nil }
func (b *zkBoard) Kind() string   { return serverkind.ZooKeeper }
func (b *zkBoard) String() string { return "zookeeper " + b.addrs }
