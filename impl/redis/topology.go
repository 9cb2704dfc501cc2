package redis

import (
	"context"
	"errors"
	"fmt"
	"sync"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// TopologyOption chooses what the Redisson locks run on: one Redis, or a
// Redis Cluster that each client reaches through a go-redis ClusterClient
// of its own. It is a setting of the rows, not a row of its own: the
// scripts are the same, and what the cluster changes is what a release's
// message costs it.
var TopologyOption = impl.ChoiceOption("redis-topology", "single",
	"redis-pubsub, redis-fenced, redis-fair: run on one Redis (single) or on a Redis Cluster (cluster: the --redis-cluster "+
		"nodes, or a sandboxed cluster of --redis-cluster-masters masters), one go-redis ClusterClient per client",
	"single", "cluster")

// PublishOption chooses how the Redisson locks publish a release:
// Redisson's shardedSubscriptionMode. Since Redisson 3.22.0 RLock and its
// kin publish with SPUBLISH and wait with SSUBSCRIBE on a Redis 7
// Cluster; 3.29.0 made that a setting whose default, AUTO, keeps it.
// Classic PUBLISH is what a cluster broadcasts over its bus to every node
// (redisson#3349).
var PublishOption = impl.ChoiceOption("redis-publish", "auto",
	"redis-pubsub, redis-fenced, redis-fair: how a release is published: auto (as "+Redisson+
		" does: sharded on a cluster, classic on one Redis), classic (PUBLISH/SUBSCRIBE: every cluster node forwards "+
		"each release over the cluster bus; Redisson before 3.22.0, or shardedSubscriptionMode OFF) or sharded "+
		"(SPUBLISH/SSUBSCRIBE: the message stays on the channel's shard)",
	"auto", "classic", "sharded")

// ClusterNeed is a Redis Cluster for the Redisson locks' cluster topology.
// Each client holds a command and a subscription connection to every
// master; Conns counts them per master.
var ClusterNeed = impl.Need{Role: "redis-cluster", Kind: serverkind.RedisCluster, Conns: 2, Redirects: true,
	Usage: "Redis Cluster node addresses for --redis-topology cluster (one is enough: clients learn the others)",
	Guard: ClusterGuard}

// Topology is the Redisson locks' choice of servers, by TopologyOption.
var Topology = &impl.Topology{Option: TopologyOption, Needs: map[string][]impl.Need{
	"single":  {SubscribingNeed},
	"cluster": {ClusterNeed},
}}

// OnCluster reports whether cfg runs the Redisson locks on a cluster.
func OnCluster(cfg impl.Config) bool { return cfg.Option(TopologyOption) == "cluster" }

// Sharded reports whether cfg's releases are published with SPUBLISH and
// waited for with SSUBSCRIBE.
func Sharded(cfg impl.Config) bool {
	switch cfg.Option(PublishOption) {
	case "sharded":
		return true
	case "classic":
		return false
	}
	return OnCluster(cfg)
}

// PublishCommand is the command the release scripts publish with, passed
// to them as an argument as Redisson passes its own.
func PublishCommand(cfg impl.Config) string {
	if Sharded(cfg) {
		return "spublish"
	}
	return "publish"
}

// ValidateTopology refuses sharded publishing on one Redis: Redisson
// publishes sharded only on a cluster.
func ValidateTopology(cfg impl.Config) error {
	if cfg.Option(PublishOption) == "sharded" && !OnCluster(cfg) {
		return errors.New("--redis-publish sharded needs --redis-topology cluster: Redisson publishes sharded only on a cluster")
	}
	return nil
}

// Addrs are the addresses of the servers the Redisson locks run on under
// cfg, and the first, which errors name.
func Addrs(cfg impl.Config) ([]string, string, error) {
	role := SubscribingNeed.Role
	if OnCluster(cfg) {
		role = ClusterNeed.Role
	}
	addrs := cfg.Servers[role]
	if len(addrs) == 0 {
		return nil, "", fmt.Errorf("no %s address", role)
	}
	return addrs, addrs[0], nil
}

// Commands is what a Redisson-style client sends its commands through: a
// Conn to one Redis, or a ClusterClient that sends each script to the
// master of its keys' slot.
type Commands interface {
	goredis.Scripter
	Del(ctx context.Context, keys ...string) *goredis.IntCmd
	Close() error
}

// NewClusterClient makes one simulated client's cluster client: one
// connection to each master, every command counted, no retries and no
// redirects followed (the sandbox's cluster never moves a slot, and a
// retry would hide a failed round trip).
func NewClusterClient(addrs []string, cfg impl.Config, c *impl.Counters) *goredis.ClusterClient {
	cl := goredis.NewClusterClient(&goredis.ClusterOptions{
		Addrs:                 addrs,
		Protocol:              2,
		PoolSize:              1,
		MaxActiveConns:        1,
		MaxRetries:            -1,
		MaxRedirects:          -1,
		DialTimeout:           cfg.DialTimeout,
		ContextTimeoutEnabled: true,
		DisableIdentity:       true,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
	})
	cl.AddHook(countHook{c})
	return cl
}

// DialCommands opens a client's command connections under cfg — a
// dedicated connection to one Redis, or a cluster client with a
// connection to every master — and loads scripts on every server, all
// answered before it returns.
func DialCommands(ctx context.Context, cfg impl.Config, c *impl.Counters, scripts ...*goredis.Script) (Commands, error) {
	addrs, addr, err := Addrs(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	var cmds Commands
	var ping func(ctx context.Context) error
	if OnCluster(cfg) {
		cl := NewClusterClient(addrs, cfg, c)
		cmds = cl
		ping = func(ctx context.Context) error {
			return cl.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error { return m.Ping(ctx).Err() })
		}
	} else {
		cl := NewConn(NewClient(addr, cfg, c))
		cmds = cl
		ping = func(ctx context.Context) error { return cl.Client().Ping(ctx).Err() }
	}
	if err := ping(ctx); err != nil {
		cmds.Close()
		return nil, fmt.Errorf("%s: %w: %w", addr, impl.ErrUnreachable, err)
	}
	for _, s := range scripts {
		// On a cluster, SCRIPT LOAD goes to every master.
		if err := s.Load(ctx, cmds).Err(); err != nil {
			cmds.Close()
			return nil, fmt.Errorf("%s: load script: %w", addr, err)
		}
	}
	return cmds, nil
}

// Subscribers are a client's subscription connections: one to a single
// Redis, or one to each master of a cluster, as a Redisson instance keeps
// an idle subscription connection per master (its
// subscriptionConnectionMinimumIdleSize, 1) and subscribes to a channel
// on the master of the channel's slot. Made before any measurement; For
// picks one without a round trip.
type Subscribers struct {
	Sharded bool
	// Conns are the connections, by server address.
	Conns   map[string]*goredis.PubSub
	cluster *goredis.ClusterClient
	single  string
}

// OpenSubscribers makes the subscription connections under cfg, beside
// cmds (DialCommands's), without a round trip: the caller's reader pings
// them.
func OpenSubscribers(ctx context.Context, cfg impl.Config, cmds Commands) (*Subscribers, error) {
	s := &Subscribers{Sharded: Sharded(cfg), Conns: map[string]*goredis.PubSub{}}
	switch cl := cmds.(type) {
	case *goredis.ClusterClient:
		s.cluster = cl
		var mu sync.Mutex
		err := cl.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
			ps := m.Subscribe(ctx)
			mu.Lock()
			s.Conns[m.Options().Addr] = ps
			mu.Unlock()
			return nil
		})
		if err != nil {
			s.Close()
			return nil, err
		}
	case *Conn:
		s.single = cl.Client().Options().Addr
		s.Conns[s.single] = cl.Client().Subscribe(ctx)
	default:
		return nil, fmt.Errorf("redis: no subscriptions beside %T", cmds)
	}
	return s, nil
}

// For returns the connection to subscribe to ch on: the one Redis's, or
// that of the master of ch's slot (from the cluster client's slot table,
// without a round trip).
func (s *Subscribers) For(ctx context.Context, ch string) (*goredis.PubSub, error) {
	if s.cluster == nil {
		return s.Conns[s.single], nil
	}
	m, err := s.cluster.MasterForKey(ctx, ch)
	if err != nil {
		return nil, err
	}
	ps, ok := s.Conns[m.Options().Addr]
	if !ok {
		return nil, fmt.Errorf("redis: no subscription connection to %s, the master of %s", m.Options().Addr, ch)
	}
	return ps, nil
}

// Kinds are the confirmations of a subscription and of its end.
func (s *Subscribers) Kinds() (sub, unsub string) {
	if s.Sharded {
		return "ssubscribe", "sunsubscribe"
	}
	return "subscribe", "unsubscribe"
}

// Subscribe writes (S)SUBSCRIBE ch on ps.
func (s *Subscribers) Subscribe(ctx context.Context, ps *goredis.PubSub, ch string) error {
	if s.Sharded {
		return ps.SSubscribe(ctx, ch)
	}
	return ps.Subscribe(ctx, ch)
}

// Unsubscribe writes (S)UNSUBSCRIBE ch on ps.
func (s *Subscribers) Unsubscribe(ctx context.Context, ps *goredis.PubSub, ch string) error {
	if s.Sharded {
		return ps.SUnsubscribe(ctx, ch)
	}
	return ps.Unsubscribe(ctx, ch)
}

// Close closes every connection.
func (s *Subscribers) Close() error {
	var errs []error
	for _, ps := range s.Conns {
		errs = append(errs, ps.Close())
	}
	return errors.Join(errs...)
}

// DeleteEach deletes, on every server at addrs, the keys that match
// patterns, one DEL per key: on a cluster node, keys of different slots
// cannot share a DEL.
func DeleteEach(ctx context.Context, addrs []string, patterns ...string) error {
	for _, addr := range addrs {
		cl := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
		err := deleteEach(ctx, cl, patterns)
		cl.Close()
		if err != nil {
			return fmt.Errorf("redis %s: %w", addr, err)
		}
	}
	return nil
}

func deleteEach(ctx context.Context, cl *goredis.Client, patterns []string) error {
	for _, pattern := range patterns {
		it := cl.Scan(ctx, 0, pattern, 1000).Iterator()
		var keys []string
		for it.Next(ctx) {
			keys = append(keys, it.Val())
		}
		if err := it.Err(); err != nil {
			return fmt.Errorf("SCAN MATCH %s: %w", pattern, err)
		}
		p := cl.Pipeline()
		for _, k := range keys {
			p.Del(ctx, k)
		}
		if _, err := p.Exec(ctx); err != nil && len(keys) > 0 {
			return fmt.Errorf("cleanup %s: %w", pattern, err)
		}
	}
	return nil
}

// ServerAddrs are the addresses of every server the Redisson locks may
// have written to in s: the one Redis's, and every master of the cluster,
// learned from the nodes given — a residue or a cleanup must see the
// masters the user did not name too.
func ServerAddrs(ctx context.Context, s impl.Servers) ([]string, error) {
	out := append([]string(nil), s[SubscribingNeed.Role]...)
	nodes := s[ClusterNeed.Role]
	if len(nodes) == 0 {
		return out, nil
	}
	cl := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: nodes, Protocol: 2, DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
	defer cl.Close()
	var mu sync.Mutex
	err := cl.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
		mu.Lock()
		out = append(out, m.Options().Addr)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("redis cluster %s: %w", nodes[0], err)
	}
	return out, nil
}
