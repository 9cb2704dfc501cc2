package lockbench_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	rsgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/go-zookeeper/zk"
	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/etcdmutex"
	"github.com/lockbench/lockbench/impl/mysqlgetlock"
	"github.com/lockbench/lockbench/impl/pgadvisory"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/impl/redlock"
	zkimpl "github.com/lockbench/lockbench/impl/zk"
	"github.com/lockbench/lockbench/internal/dsn"
)

// peer is a row's plain-loop peer: the library the row is named after,
// called as its users call it, with nothing of lockbench around it. dial
// opens one client's connection and returns its acquire-and-release cycle
// on a lock name of its own, and what closes it.
type peer struct {
	impl string
	dial func(ctx context.Context, srv impl.Servers, client int) (cycle func(ctx context.Context) error, closer func(), err error)
}

// peers are the plain loops beside the rows named after libraries and the
// locks teams already run; the rows that are lockbench's own recipes have
// their peer in BenchmarkLock's own inproc row and in scripts/redis-baseline.
var peers = []peer{
	{"redis", dialRedisPeer},
	{"redsync", dialRedsyncPeer},
	{"etcd", dialEtcdPeer},
	{"zk-lock", dialZKLockPeer},
	{"pg-advisory", dialPostgresPeer},
	{"mysql-getlock", dialMySQLPeer},
}

// BenchmarkPeer runs each peer uncontended — n clients, each on its own
// connection and its own lock — with the names BenchmarkLock gives its
// rows, so that benchstat or benchcheck set a row beside its peer: the
// ratio of their ns/op is the harness's share of the row's cost.
func BenchmarkPeer(b *testing.B) {
	srv := allServers(b)
	for _, p := range peers {
		for _, n := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("impl=%s/scenario=uncontended/clients=%d", p.impl, n), func(b *testing.B) {
				ctx := context.Background()
				cycles := make([]func(context.Context) error, n)
				for i := range n {
					cycle, closer, err := p.dial(ctx, srv, i)
					if err != nil {
						b.Fatal(err)
					}
					defer closer()
					cycles[i] = cycle
				}
				b.ResetTimer()
				var wg sync.WaitGroup
				errs := make(chan error, n)
				for i, cycle := range cycles {
					share := b.N / n
					if i < b.N%n {
						share++
					}
					wg.Go(func() {
						for range share {
							if err := cycle(ctx); err != nil {
								errs <- err
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
			})
		}
	}
}

func peerName(client int) string {
	return fmt.Sprintf("lockbench-peer-%d-%d", time.Now().UnixNano(), client)
}

// dialRedisPeer is the single-instance Redis lock with go-redis: SET NX
// PX, then the compare-and-delete script.
func dialRedisPeer(ctx context.Context, srv impl.Servers, client int) (func(context.Context) error, func(), error) {
	c := goredis.NewClient(&goredis.Options{Addr: srv[redis.Need.Role][0], PoolSize: 1})
	release := goredis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`)
	key, token := peerName(client), fmt.Sprintf("token-%d", client)
	cycle := func(ctx context.Context) error {
		ok, err := c.SetNX(ctx, key, token, 30*time.Second).Result()
		if err != nil || !ok {
			return fmt.Errorf("redis peer: SET NX: %v, %v", ok, err)
		}
		return release.Run(ctx, c, []string{key}, token).Err()
	}
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, nil, err
	}
	return cycle, func() { c.Close() }, nil
}

// dialRedsyncPeer is redsync's mutex over the Redlock masters, with its
// defaults.
func dialRedsyncPeer(ctx context.Context, srv impl.Servers, client int) (func(context.Context) error, func(), error) {
	var pools []rsredis.Pool
	var clients []*goredis.Client
	for _, a := range srv[redlock.Masters.Role] {
		c := goredis.NewClient(&goredis.Options{Addr: a, PoolSize: 1})
		clients = append(clients, c)
		pools = append(pools, rsgoredis.NewPool(c))
	}
	closer := func() {
		for _, c := range clients {
			c.Close()
		}
	}
	m := redsync.New(pools...).NewMutex(peerName(client))
	cycle := func(ctx context.Context) error {
		if err := m.LockContext(ctx); err != nil {
			return err
		}
		_, err := m.UnlockContext(ctx)
		return err
	}
	return cycle, closer, nil
}

// dialEtcdPeer is etcd's concurrency.Mutex as its docs show: a session
// per client, NewMutex, Lock, Unlock.
func dialEtcdPeer(ctx context.Context, srv impl.Servers, client int) (func(context.Context) error, func(), error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: srv[etcdmutex.Need.Role], DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, nil, err
	}
	s, err := concurrency.NewSession(cli)
	if err != nil {
		cli.Close()
		return nil, nil, err
	}
	m := concurrency.NewMutex(s, "/"+peerName(client))
	cycle := func(ctx context.Context) error {
		if err := m.Lock(ctx); err != nil {
			return err
		}
		return m.Unlock(ctx)
	}
	return cycle, func() { s.Close(); cli.Close() }, nil
}

// dialZKLockPeer is go-zookeeper's zk.Lock.
func dialZKLockPeer(ctx context.Context, srv impl.Servers, client int) (func(context.Context) error, func(), error) {
	conn, events, err := zk.Connect(srv[zkimpl.Ensemble.Role], 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		return nil, nil, err
	}
	timeout := time.After(10 * time.Second)
	for wait := true; wait; {
		select {
		case e := <-events:
			wait = e.State != zk.StateHasSession
		case <-timeout:
			conn.Close()
			return nil, nil, fmt.Errorf("zk-lock peer: no session within 10 s")
		}
	}
	l := zk.NewLock(conn, "/"+peerName(client), zk.WorldACL(zk.PermAll))
	cycle := func(context.Context) error {
		if err := l.Lock(); err != nil {
			return err
		}
		return l.Unlock()
	}
	return cycle, conn.Close, nil
}

// dialPostgresPeer is a session advisory lock with pgx: pg_advisory_lock,
// pg_advisory_unlock.
func dialPostgresPeer(ctx context.Context, srv impl.Servers, client int) (func(context.Context) error, func(), error) {
	conn, err := pgx.Connect(ctx, dsn.Postgres(srv[pgadvisory.Role][0]))
	if err != nil {
		return nil, nil, err
	}
	key := int64(client) + time.Now().UnixNano()%1_000_000*100
	cycle := func(ctx context.Context) error {
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
			return err
		}
		_, err := conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", key)
		return err
	}
	return cycle, func() { conn.Close(context.Background()) }, nil
}

// dialMySQLPeer is GET_LOCK and RELEASE_LOCK on a pinned *sql.Conn with
// go-sql-driver/mysql.
func dialMySQLPeer(ctx context.Context, srv impl.Servers, client int) (func(context.Context) error, func(), error) {
	cfg, err := mysqldrv.ParseDSN(dsn.MySQL(srv[mysqlgetlock.Role][0]))
	if err != nil {
		return nil, nil, err
	}
	connector, err := mysqldrv.NewConnector(cfg)
	if err != nil {
		return nil, nil, err
	}
	db := sql.OpenDB(connector)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	name := peerName(client)
	cycle := func(ctx context.Context) error {
		var got sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 10)", name).Scan(&got); err != nil || got.Int64 != 1 {
			return fmt.Errorf("mysql peer: GET_LOCK: %v, %v", got, err)
		}
		return conn.QueryRowContext(ctx, "SELECT RELEASE_LOCK(?)", name).Scan(&got)
	}
	return cycle, func() { conn.Close(); db.Close() }, nil
}
