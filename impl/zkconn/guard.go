package zkconn

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	gozk "github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/impl"
)

func init() { Ensemble.Guard = Guard }

// Guard opens the guarded register (impl.Guard) on the ensemble at addrs:
// two persistent nodes per lock whose data are the counters, the fenced
// one's led by the highest token it has seen. Every access is a
// conditional setData on the version just read, retried when another
// client wrote in between, so that the fence check and the value moved
// are taken in the same step as the write. The nodes live beside the
// namespace (<namespace>.guard), not in it, where a lock's residue count
// would take them for queue nodes.
func Guard(ctx context.Context, cfg impl.Config, addrs []string) (impl.Guard, error) {
	var c impl.Counters // its round trips are the register's, not the lock's
	cfg.Servers = impl.Servers{Ensemble.Role: addrs}
	conn, err := Dial(ctx, cfg, &c, nil)
	if err != nil {
		return nil, fmt.Errorf("zk: guarded register: %w", err)
	}
	return &guard{conn: conn, ns: cfg.Namespace + ".guard"}, nil
}

type guard struct {
	conn *gozk.Conn
	ns   string
	c    impl.Counters
}

// node is one counter as stored: "value" or, fenced, "highest value".
type node struct {
	highest uint64
	value   int64
	version int32
}

func (g *guard) path(lock, which string) string { return Path(g.ns, lock+"."+which) }

// get reads a counter, creating its node when it is missing.
func (g *guard) get(p string) (node, error) {
	data, stat, err := g.conn.Get(p)
	if errors.Is(err, gozk.ErrNoNode) {
		if err = EnsurePath(g.conn, p, &g.c); err == nil {
			data, stat, err = g.conn.Get(p)
		}
	}
	if err != nil {
		return node{}, Wrap("guarded register "+p, err)
	}
	n := node{version: stat.Version}
	f := strings.Fields(string(data))
	if len(f) == 2 {
		n.highest, err = strconv.ParseUint(f[0], 10, 64)
		f = f[1:]
	}
	if err == nil && len(f) == 1 {
		n.value, err = strconv.ParseInt(f[0], 10, 64)
	}
	if err != nil {
		return node{}, fmt.Errorf("zk: guarded register %s holds %q: %w", p, data, err)
	}
	return n, nil
}

// update applies change to the counter at p as a conditional write on
// the version read, again while another client's write gets in between.
// change returns the data to write, or ok false to write nothing.
func (g *guard) update(ctx context.Context, p string, change func(node) (data string, ok bool)) (node, error) {
	for ctx.Err() == nil {
		n, err := g.get(p)
		if err != nil {
			return n, err
		}
		data, ok := change(n)
		if !ok {
			return n, nil
		}
		_, err = g.conn.Set(p, []byte(data), n.version)
		if errors.Is(err, gozk.ErrBadVersion) {
			continue
		}
		if err != nil {
			return n, Wrap("guarded register "+p, err)
		}
		return n, nil
	}
	return node{}, ctx.Err()
}

func fencedData(highest uint64, value int64) string {
	return strconv.FormatUint(highest, 10) + " " + strconv.FormatInt(value, 10)
}

func (g *guard) Read(ctx context.Context, lock string, token uint64) (impl.Reading, error) {
	defer Bound(ctx, g.conn)()
	var r impl.Reading
	u, err := g.get(g.path(lock, "unfenced"))
	if err != nil {
		return r, err
	}
	f, err := g.update(ctx, g.path(lock, "fenced"), func(n node) (string, bool) {
		return fencedData(token, n.value), token > n.highest
	})
	if err != nil {
		return r, err
	}
	return impl.Reading{Unfenced: u.value, Fenced: f.value, Refused: token < f.highest}, nil
}

func (g *guard) Write(ctx context.Context, lock string, token uint64, r impl.Reading) (impl.Written, error) {
	defer Bound(ctx, g.conn)()
	var w impl.Written
	u, err := g.update(ctx, g.path(lock, "unfenced"), func(node) (string, bool) {
		return strconv.FormatInt(r.Unfenced+1, 10), true
	})
	if err != nil {
		return w, err
	}
	w.UnfencedMoved = u.value - r.Unfenced
	if r.Refused {
		return w, nil
	}
	f, err := g.update(ctx, g.path(lock, "fenced"), func(n node) (string, bool) {
		return fencedData(max(token, n.highest), r.Fenced+1), token >= n.highest
	})
	if err != nil {
		return w, err
	}
	if token >= f.highest {
		w.FencedAccepted, w.FencedMoved = true, f.value-r.Fenced
	}
	return w, nil
}

func (g *guard) Values(ctx context.Context, lock string) (fenced, unfenced int64, err error) {
	defer Bound(ctx, g.conn)()
	f, err := g.get(g.path(lock, "fenced"))
	if err != nil {
		return 0, 0, err
	}
	u, err := g.get(g.path(lock, "unfenced"))
	return f.value, u.value, err
}

func (g *guard) Close() error { g.conn.Close(); return nil }
