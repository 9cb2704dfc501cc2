package etcdmutex

import (
	"context"
	"path"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/lockbench/lockbench/impl"
)

// queueView is the etcd-lock row's view of the server's queues under one
// namespace: the keys the server's mutex put for waiting clients, each
// behind an older key of the same lock. It reads on a client of its own,
// only while clients ask (impl.QueueView).
type queueView = impl.QueueView[string]

const viewIdle = 2 * time.Second

var (
	viewsMu sync.Mutex
	views   = map[string]*queueView{}
)

// viewFor returns the view of the queues under root on the etcd at
// endpoints.
func viewFor(endpoints []string, root string) *queueView {
	viewsMu.Lock()
	defer viewsMu.Unlock()
	id := strings.Join(endpoints, ",") + " " + root
	v, ok := views[id]
	if !ok {
		v = impl.NewQueueView(viewIdle, func(ctx context.Context) (func(context.Context) ([]string, error), func(), error) {
			cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
			if err != nil {
				return nil, nil, err
			}
			list := func(ctx context.Context) ([]string, error) { return waitingKeys(ctx, cli, root) }
			return list, func() { cli.Close() }, nil
		})
		views[id] = v
	}
	return v
}

// waitingKeys lists the keys under root that wait behind an older key of
// the same lock (a lock's keys are LOCK/LEASE).
func waitingKeys(ctx context.Context, cli *clientv3.Client, root string) ([]string, error) {
	resp, err := cli.Get(ctx, root, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	oldest := map[string]int64{}
	for _, kv := range resp.Kvs {
		lock := path.Dir(string(kv.Key))
		if r, ok := oldest[lock]; !ok || kv.CreateRevision < r {
			oldest[lock] = kv.CreateRevision
		}
	}
	var out []string
	for _, kv := range resp.Kvs {
		if kv.CreateRevision > oldest[path.Dir(string(kv.Key))] {
			out = append(out, string(kv.Key))
		}
	}
	return out, nil
}
