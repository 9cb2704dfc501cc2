package redispubsub_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/impltest"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/sandbox/rediscluster"
	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/sandboxtest"
)

// A burst of 8 on a Redis Cluster of 3 masters, published classic and
// sharded. Both wake every subscribed waiter on every release, as the
// theory says: 8·7/2 wake-ups, each a delivery the publishes' replies
// count. What differs is the bus: the cluster forwards each classic
// PUBLISH to each of the other masters, 2 bus messages a release, and a
// sharded SPUBLISH to the shard's replicas, of which there are none — so
// the cost per hand-off in cluster-bus messages is higher classic than
// sharded, gossip included. The cluster must be the test's alone.
func TestClusterBurstClassicVsSharded(t *testing.T) {
	const n, masters = 8, 3
	servers := sandboxtest.StartSized(t, map[string]int{serverkind.RedisCluster: masters}, redis.ClusterNeed)
	burst, _ := engine.LookupScenario("burst")
	perHandoff := map[string]float64{}
	for _, mode := range []string{"classic", "sharded"} {
		res, err := engine.RunCellDetail(context.Background(), engine.CellSpec{
			Impl: name, Scenario: burst, Clients: n, Locks: 1,
			ServerKinds: sandbox.Meter{},
			Config: impl.Config{Servers: servers, Namespace: fmt.Sprintf("%s-%s-%p", t.Name(), mode, t),
				Options: map[string]string{redis.TopologyOption.Name: "cluster", redis.PublishOption.Name: mode}},
		})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		c := res.Cell
		const want = n * (n - 1) / 2
		if c.Acquires != n || c.Errors != 0 || c.SafetyViolations != 0 || c.Settle != "exact" {
			t.Errorf("%s: acquires %d errors %d violations %d settle %q", mode, c.Acquires, c.Errors, c.SafetyViolations, c.Settle)
		}
		if c.TheoryWakeups == nil || *c.TheoryWakeups != want || c.ReleaseWakeups != want {
			t.Errorf("%s: release wake-ups %d, theory %v; want both %d", mode, c.ReleaseWakeups, c.TheoryWakeups, want)
		}
		if v := c.Vectors["publish_receivers"]; len(v) != 1 || v[0] != want || c.Notifications != want {
			t.Errorf("%s: the publishes reached %v subscribers, the clients counted %d; want both %d", mode, v, c.Notifications, want)
		}
		classic := mode == "classic"
		wantBus := int64(0)
		if classic {
			wantBus = (masters - 1) * n
		}
		if got := c.Server[rediscluster.ClusterPublishSent]; got != wantBus {
			t.Errorf("%s: %d PUBLISH bus messages for %d releases, want %d", mode, got, n, wantBus)
		}
		if got := c.Server[rediscluster.ClusterPublishShardSent]; got != 0 {
			t.Errorf("%s: %d SPUBLISH bus messages on a cluster without replicas, want 0", mode, got)
		}
		// Every release ran on the master of the lock's slot, publishing
		// with the command its mode names.
		cmd, other := "publish", "spublish"
		if !classic {
			cmd, other = other, cmd
		}
		nodes := 0
		for k, v := range c.Server {
			switch {
			case strings.HasSuffix(k, "_"+cmd+"_calls") && strings.HasPrefix(k, "node") && v > 0:
				nodes++
				if v != n {
					t.Errorf("%s: %s = %d, want one %s per release, %d", mode, k, v, cmd, n)
				}
			case strings.HasSuffix(k, "_"+other+"_calls") && strings.HasPrefix(k, "node") && v != 0:
				t.Errorf("%s: %s = %d, want none", mode, k, v)
			}
		}
		if nodes != 1 {
			t.Errorf("%s: %d nodes ran %s, want the slot's master alone", mode, nodes, cmd)
		}
		h, ok := result.HandoffCosts(c)
		if !ok || h.Messages == nil || h.MessagesUnit != "cluster-bus messages (heartbeats aside)" {
			t.Fatalf("%s: no cluster-bus messages per hand-off: %+v", mode, h)
		}
		perHandoff[mode] = *h.Messages
		t.Logf("%s: %.2f cluster-bus messages per hand-off (%d PUBLISH bus messages, %d sent in all)",
			mode, *h.Messages, c.Server[rediscluster.ClusterPublishSent], c.Server[rediscluster.ClusterBusSent])
	}
	if perHandoff["classic"] <= perHandoff["sharded"] {
		t.Errorf("cluster-bus messages per hand-off: classic %.2f, sharded %.2f; want classic above sharded", perHandoff["classic"], perHandoff["sharded"])
	}
}

// The conformance suite on a cluster, publishing sharded (Redisson's
// default there).
func TestConformanceOnCluster(t *testing.T) {
	d, ok := impl.Lookup(name)
	if !ok {
		t.Fatalf("driver %s not registered", name)
	}
	opts := map[string]string{redis.TopologyOption.Name: "cluster"}
	d = d.For(impl.Config{Options: opts})
	impltest.Run(t, d, sandboxtest.Start(t, d.Needs...), impltest.Options{Configure: func(cfg *impl.Config) {
		cfg.Options = opts
	}})
}
