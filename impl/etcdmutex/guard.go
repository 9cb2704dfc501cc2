package etcdmutex

import (
	"context"
	"fmt"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/lockbench/lockbench/impl"
)

// Guard opens the guarded register (impl.Guard) on the etcd at addrs:
// three keys per lock — the two counters and the highest token the
// fenced one has seen — beside the namespace (<namespace>.guard), not in
// it, where the residue count would take them for queue keys. The
// unfenced write is a put returning the value it replaced; the fenced
// one, and the token's record, a transaction conditional on the
// revisions just read, retried when another client wrote in between.
func Guard(ctx context.Context, cfg impl.Config, addrs []string) (impl.Guard, error) {
	cfg = cfg.WithDefaults()
	cli, err := clientv3.New(clientv3.Config{Endpoints: addrs, DialTimeout: cfg.DialTimeout, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("etcd: guarded register: %w", err)
	}
	return &guard{cli: cli, prefix: guardPrefix(cfg.Namespace)}, nil
}

// guardPrefix is where a namespace's guarded registers live.
func guardPrefix(namespace string) string { return Root + "/" + namespace + ".guard/" }

type guard struct {
	cli    *clientv3.Client
	prefix string
}

// counter is one key as read: its number and its last write's revision
// (0: no such key yet).
type counter struct {
	n   int64
	rev int64
}

func (g *guard) keys(lock string) (unfenced, fenced, highest string) {
	p := g.prefix + lock + "/"
	return p + "unfenced", p + "fenced", p + "highest"
}

// get reads keys in one transaction, so that they are of one revision.
func (g *guard) get(ctx context.Context, keys ...string) ([]counter, error) {
	ops := make([]clientv3.Op, len(keys))
	for i, k := range keys {
		ops[i] = clientv3.OpGet(k)
	}
	resp, err := g.cli.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return nil, fmt.Errorf("etcd: guarded register: %w", err)
	}
	out := make([]counter, len(keys))
	for i, r := range resp.Responses {
		if kvs := r.GetResponseRange().Kvs; len(kvs) > 0 {
			n, err := strconv.ParseInt(string(kvs[0].Value), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("etcd: guarded register %s holds %q: %w", keys[i], kvs[0].Value, err)
			}
			out[i] = counter{n: n, rev: kvs[0].ModRevision}
		}
	}
	return out, nil
}

// cas writes puts if none of the keys read has been written since.
func (g *guard) cas(ctx context.Context, read map[string]counter, puts map[string]int64) (bool, error) {
	var cmps []clientv3.Cmp
	for k, c := range read {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", c.rev))
	}
	var ops []clientv3.Op
	for k, v := range puts {
		ops = append(ops, clientv3.OpPut(k, strconv.FormatInt(v, 10)))
	}
	resp, err := g.cli.Txn(ctx).If(cmps...).Then(ops...).Commit()
	if err != nil {
		return false, fmt.Errorf("etcd: guarded register: %w", err)
	}
	return resp.Succeeded, nil
}

func (g *guard) Read(ctx context.Context, lock string, token uint64) (impl.Reading, error) {
	ku, kf, kh := g.keys(lock)
	for ctx.Err() == nil {
		c, err := g.get(ctx, ku, kf, kh)
		if err != nil {
			return impl.Reading{}, err
		}
		r := impl.Reading{Unfenced: c[0].n, Fenced: c[1].n, Refused: int64(token) < c[2].n}
		if int64(token) <= c[2].n {
			return r, nil
		}
		ok, err := g.cas(ctx, map[string]counter{kh: c[2]}, map[string]int64{kh: int64(token)})
		if err != nil || ok {
			return r, err
		}
	}
	return impl.Reading{}, ctx.Err()
}

func (g *guard) Write(ctx context.Context, lock string, token uint64, r impl.Reading) (impl.Written, error) {
	ku, kf, kh := g.keys(lock)
	var w impl.Written
	resp, err := g.cli.Put(ctx, ku, strconv.FormatInt(r.Unfenced+1, 10), clientv3.WithPrevKV())
	if err != nil {
		return w, fmt.Errorf("etcd: guarded register: %w", err)
	}
	if prev := resp.PrevKv; prev != nil {
		n, err := strconv.ParseInt(string(prev.Value), 10, 64)
		if err != nil {
			return w, fmt.Errorf("etcd: guarded register %s held %q: %w", ku, prev.Value, err)
		}
		w.UnfencedMoved = n - r.Unfenced
	} else {
		w.UnfencedMoved = -r.Unfenced
	}
	if r.Refused {
		return w, nil
	}
	for ctx.Err() == nil {
		c, err := g.get(ctx, kf, kh)
		if err != nil {
			return w, err
		}
		if int64(token) < c[1].n {
			return w, nil
		}
		ok, err := g.cas(ctx, map[string]counter{kf: c[0], kh: c[1]},
			map[string]int64{kf: r.Fenced + 1, kh: max(int64(token), c[1].n)})
		if err != nil {
			return w, err
		}
		if ok {
			w.FencedAccepted, w.FencedMoved = true, c[0].n-r.Fenced
			return w, nil
		}
	}
	return w, ctx.Err()
}

func (g *guard) Values(ctx context.Context, lock string) (fenced, unfenced int64, err error) {
	ku, kf, _ := g.keys(lock)
	c, err := g.get(ctx, kf, ku)
	if err != nil {
		return 0, 0, err
	}
	return c[0].n, c[1].n, nil
}

func (g *guard) Close() error { return g.cli.Close() }
