// Package rediscluster is the sandbox's Redis Cluster kind: n
// cluster-enabled redis-servers sharing the slots, built on package
// redis's server, and its bus counters (what a release costs a cluster).
package rediscluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/sandbox/redis"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// KindRedisCluster is a Redis Cluster of masters, without replicas.
const KindRedisCluster = serverkind.RedisCluster

// A Redis Cluster is an ensemble kind: n masters share the 16384 slots
// (`redis-cli --cluster create … --cluster-replicas 0`) and form one
// service. The default size is 3, the fewest redis-cli creates; 6 shows
// how a cost that every node pays grows with the cluster.
func init() {
	sandbox.RegisterKind(sandbox.Kind{
		Name: KindRedisCluster, Flag: "redis-cluster", Ensemble: true, Default: 3,
		SizeFlag: "redis-cluster-masters", SizeUsage: "masters of the sandboxed Redis Cluster: 3 or more (6 shows what grows with the cluster)",
		// A cluster's masters need no majority of their own here (no
		// failover is staged), and 6 is the size that shows the growth.
		CheckSize: func(n int) error {
			if n != 1 && n < 3 {
				return fmt.Errorf("must be 3 or more, got %d", n)
			}
			return nil
		},
		Start: startRedisCluster,
		Find: func() error {
			if _, err := redis.Find(); err != nil {
				return err
			}
			_, err := findRedisCLI()
			return err
		},
		Stats:   redisClusterStats,
		Counts:  redisClusterCounts,
		Version: redis.Version,
		// Each master snapshots as a single Redis does, in the profile.
		Settings: func(p sandbox.Profile) string {
			if p == sandbox.ProfileFast {
				return "--save '' on every master"
			}
			return "--save '" + redis.Save + "' on every master (Debian's redis.conf leaves Redis's own rules)"
		},
	})
}

func findRedisCLI() (string, error) {
	if p, err := exec.LookPath("redis-cli"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/bin/redis-cli", "/usr/local/bin/redis-cli", "/opt/homebrew/bin/redis-cli"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", &sandbox.MissingError{What: "redis-cli", Install: "apt-get install -y redis-tools"}
}

// startRedisCluster starts n cluster-enabled redis-servers, each with a
// client port and a bus port of its own (cluster-port), joins them with
// redis-cli --cluster create, and returns once every node says
// cluster_state:ok.
func startRedisCluster(ctx context.Context, dir string, n int) ([]*sandbox.Server, error) {
	if n <= 1 { // one of the kind, as the sandbox asks of every kind: the default size
		n = 3
	}
	if n < 3 {
		return nil, fmt.Errorf("sandbox: a Redis Cluster needs 3 masters or more, not %d", n)
	}
	save := ""
	if !sandbox.Fast(ctx) {
		save = redis.Save // as a single Redis: production snapshots
	}
	bin, err := redis.Find()
	if err != nil {
		return nil, err
	}
	cli, err := findRedisCLI()
	if err != nil {
		return nil, err
	}
	ports, err := sandbox.FreePorts(2 * n)
	if err != nil {
		return nil, err
	}
	servers := make([]*sandbox.Server, 0, n)
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("redis-cluster-%d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return servers, fmt.Errorf("sandbox: %w", err)
		}
		port := strconv.Itoa(ports[2*i])
		s := sandbox.NewServer(sandbox.Process{
			Kind: KindRedisCluster, Addr: "127.0.0.1:" + port, Dir: d, Bin: bin,
			Log: filepath.Join(d, "redis.log"),
			Args: []string{
				"--port", port, "--bind", "127.0.0.1", "--cluster-enabled", "yes",
				"--cluster-port", strconv.Itoa(ports[2*i+1]), "--cluster-config-file", filepath.Join(d, "nodes.conf"),
				"--cluster-node-timeout", "5000",
				"--save", save, "--appendonly", "no", "--dir", d, "--daemonize", "no", "--protected-mode", "no",
				"--maxclients", "10000", "--logfile", "",
			},
			Ready: redis.Ready,
		})
		servers = append(servers, s)
		if err := s.Launch(ctx); err != nil {
			return servers, err
		}
	}
	args := []string{"--cluster", "create"}
	args = append(args, sandbox.Addrs(servers)...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		return servers, fmt.Errorf("sandbox: redis-cli --cluster create: %w: %s", err, out)
	}
	return servers, waitClusterOK(ctx, servers)
}

// waitClusterOK waits until every node reports cluster_state:ok and knows
// every other node.
func waitClusterOK(ctx context.Context, servers []*sandbox.Server) error {
	want := "cluster_known_nodes:" + strconv.Itoa(len(servers))
	for _, s := range servers {
		for {
			info, err := redis.Bulk(ctx, s.Addr, "CLUSTER INFO")
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, want) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("sandbox: redis cluster node %s not ok: %w (%v)", s.Addr, ctx.Err(), err)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

// redisClusterStats sums, over every node: INFO commandstats' calls per
// command, as the redis kind does; INFO stats' client network bytes
// (net_input_bytes, net_output_bytes); and CLUSTER INFO's bus messages,
// in all (cluster_messages_sent, cluster_messages_received) and by type
// (cluster_stats_messages_publish_sent, …publishshard_sent: a classic
// PUBLISH is sent to every other node, a sharded one to the shard's
// replicas only); and each node's PUBLISH and SPUBLISH calls, as
// node<i>_publish_calls by the node's place in addrs.
func redisClusterStats(ctx context.Context, addrs []string) (map[string]int64, error) {
	out, err := redis.Stats(ctx, addrs)
	if err != nil {
		return nil, err
	}
	for i, addr := range addrs {
		// Which node ran the publishes: a lock's every release runs on
		// the master of its slot, classic or sharded alike.
		one, err := redis.Stats(ctx, []string{addr})
		if err != nil {
			return nil, err
		}
		for _, c := range []string{"publish", "spublish"} {
			if n, ok := one["cmdstat_"+c+"_calls"]; ok {
				out[fmt.Sprintf("node%d_%s_calls", i, c)] = n
			}
		}
		stats, err := redis.Info(ctx, addr, "stats")
		if err != nil {
			return nil, err
		}
		for _, kv := range [][2]string{{"total_net_input_bytes", "net_input_bytes"}, {"total_net_output_bytes", "net_output_bytes"}} {
			if v, ok := infoField(stats, kv[0]); ok {
				out[kv[1]] += v
			}
		}
		info, err := redis.Bulk(ctx, addr, "CLUSTER INFO")
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(info, "\r\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok || !strings.HasPrefix(k, "cluster_stats_messages_") {
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				continue
			}
			out[k] += n
			switch k {
			case "cluster_stats_messages_sent":
				out["cluster_messages_sent"] += n
			case "cluster_stats_messages_received":
				out["cluster_messages_received"] += n
			}
		}
	}
	return out, nil
}

// redisClusterCounts: a Redis Cluster's messages are what its nodes sent
// each other over the bus (each is received once too) but their
// heartbeats — PING, PONG and MEET, a few a second whatever the clients
// do, and more the longer a cell lasts rather than the more it does: what
// the cell's commands made the cluster say. What a release costs a
// cluster beyond one Redis is the bus traffic that grows with its nodes (a
// classic PUBLISH goes to every other node); its commands are one Redis's.
func redisClusterCounts(d map[string]int64) serverkind.Counts {
	n := d[ClusterBusSent]
	for _, hb := range []string{"ping", "pong", "meet"} {
		n -= d["cluster_stats_messages_"+hb+"_sent"]
	}
	return serverkind.Counts{Messages: n, Unit: "cluster-bus messages (heartbeats aside)", Forks: d[redis.Forks]}
}

// ClusterBusSent is the Stats key of a Redis Cluster's bus messages sent,
// summed over its nodes; ClusterPublishSent and ClusterPublishShardSent
// are those that carried a classic PUBLISH and a sharded SPUBLISH.
const (
	ClusterBusSent          = "cluster_messages_sent"
	ClusterPublishSent      = "cluster_stats_messages_publish_sent"
	ClusterPublishShardSent = "cluster_stats_messages_publishshard_sent"
)

// infoField reads one integer field of an INFO section.
func infoField(info, name string) (int64, bool) {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
