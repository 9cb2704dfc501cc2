package sandbox_test

import (
	"testing"

	"github.com/lockbench/lockbench/internal/sandbox"
	_ "github.com/lockbench/lockbench/internal/sandbox/kinds"
	"github.com/lockbench/lockbench/internal/sandbox/redis"
	"github.com/lockbench/lockbench/internal/sandbox/rediscluster"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// Each kind says what its counters mean, from its own names: the messages
// its servers handled in its unit, the watches they fired, its forks; a
// kind whose counters carry no such meaning says nothing.
func TestEachKindSaysWhatItsCountersMean(t *testing.T) {
	for _, tc := range []struct {
		kind     string
		delta    map[string]int64
		messages int64
		unit     string
		watches  int64 // -1: none counted
		forks    int64
	}{
		{serverkind.ZooKeeper, map[string]int64{"packets_received": 61, "packets_sent": 97, "watch_triggered": 36}, 158, "packets", 36, 0},
		{serverkind.Etcd, map[string]int64{"grpc_messages_received": 40, "grpc_messages_sent": 50, "watch_triggered": 7}, 90, "gRPC messages", 7, 0},
		// INFO itself is lockbench's reading, not the cell's work.
		{serverkind.Redis, map[string]int64{"cmdstat_set_calls": 8, "cmdstat_evalsha_calls": 51, "cmdstat_info_calls": 1, redis.Forks: 2}, 59, "commands + pushes", -1, 2},
		// A cluster's bus, heartbeats aside, not its commands.
		{serverkind.RedisCluster, map[string]int64{"cmdstat_evalsha_calls": 51, rediscluster.ClusterBusSent: 30, "cluster_stats_messages_ping_sent": 5,
			"cluster_stats_messages_pong_sent": 7, "cluster_stats_messages_meet_sent": 2, rediscluster.ClusterPublishSent: 16}, 16, "cluster-bus messages (heartbeats aside)", -1, 0},
		{serverkind.NATS, map[string]int64{"nats_messages": 12}, 12, "NATS messages", -1, 0},
		{serverkind.KubeAPIServer, map[string]int64{"apiserver_lease_requests": 53, "apiserver_requests": 70}, 53, "apiserver Lease requests", -1, 0},
	} {
		k, ok := sandbox.LookupKind(tc.kind)
		if !ok || k.Counts == nil {
			t.Errorf("%s: registered %v, says what its counters mean %v", tc.kind, ok, ok && k.Counts != nil)
			continue
		}
		c := k.Counts(tc.delta)
		c.ClientNotifications = 5
		n, unit, ok := c.Handled()
		if c.Pushes { // the pushes the clients received are the server's too
			n -= 5
		}
		if !ok || n != tc.messages || unit != tc.unit || c.Forks != tc.forks {
			t.Errorf("%s: %d %q (%v), forks %d; want %d %q, forks %d", tc.kind, n, unit, ok, c.Forks, tc.messages, tc.unit, tc.forks)
		}
		if w, ok := c.Fired(); ok != (tc.watches >= 0) || ok && w != tc.watches {
			t.Errorf("%s: watches %d (%v), want %d", tc.kind, w, ok, tc.watches)
		}
	}
	for _, kind := range []string{serverkind.Postgres, serverkind.MySQL} {
		if k, ok := sandbox.LookupKind(kind); !ok || k.Counts != nil {
			t.Errorf("%s: registered %v, yet says its counters count messages or watches", kind, ok)
		}
	}
}
