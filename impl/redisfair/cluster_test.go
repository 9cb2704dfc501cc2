package redisfair_test

import (
	"context"
	"fmt"
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
// sharded: either way each release tells the head waiter alone, n−1
// wake-ups as the theory says; classic, the cluster also forwards each of
// those n−1 PUBLISHes to the 2 other masters, sharded to none — so the
// cluster-bus messages per hand-off are higher classic than sharded.
func TestClusterBurstClassicVsSharded(t *testing.T) {
	const n, masters = 8, 3
	servers := sandboxtest.StartSized(t, map[string]int{serverkind.RedisCluster: masters}, redis.ClusterNeed)
	burst, _ := engine.LookupScenario("burst")
	perHandoff := map[string]float64{}
	for _, mode := range []string{"classic", "sharded"} {
		res, err := engine.RunCellDetail(context.Background(), engine.CellSpec{
			Impl: "redis-fair", Scenario: burst, Clients: n, Locks: 1,
			ServerKinds: sandbox.Meter{},
			Config: impl.Config{Servers: servers, Namespace: fmt.Sprintf("%s-%s-%p", t.Name(), mode, t),
				Options: map[string]string{redis.TopologyOption.Name: "cluster", redis.PublishOption.Name: mode}},
		})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		c := res.Cell
		if c.Acquires != n || c.Errors != 0 || c.SafetyViolations != 0 || c.Settle != "exact" {
			t.Errorf("%s: acquires %d errors %v violations %d settle %q", mode, c.Acquires, c.ErrorsByClass, c.SafetyViolations, c.Settle)
		}
		if c.TheoryWakeups == nil || *c.TheoryWakeups != n-1 || c.ReleaseWakeups != n-1 || c.WastedWakeups != 0 {
			t.Errorf("%s: release wake-ups %d (wasted %d), theory %v; want %d, none wasted", mode, c.ReleaseWakeups, c.WastedWakeups, c.TheoryWakeups, n-1)
		}
		cmd := "cmdstat_publish_calls"
		wantBus := int64((masters - 1) * (n - 1))
		if mode == "sharded" {
			cmd, wantBus = "cmdstat_spublish_calls", 0
		}
		if got := c.Server[cmd]; got != n-1 {
			t.Errorf("%s: %s = %d, want one per hand-off, %d", mode, cmd, got, n-1)
		}
		if got := c.Server[rediscluster.ClusterPublishSent]; got != wantBus {
			t.Errorf("%s: %d PUBLISH bus messages, want %d", mode, got, wantBus)
		}
		h, ok := result.HandoffCosts(c)
		if !ok || h.Messages == nil {
			t.Fatalf("%s: no server messages per hand-off: %+v", mode, h)
		}
		perHandoff[mode] = *h.Messages
		t.Logf("%s: %.2f %s per hand-off", mode, *h.Messages, h.MessagesUnit)
	}
	if perHandoff["classic"] <= perHandoff["sharded"] {
		t.Errorf("cluster-bus messages per hand-off: classic %.2f, sharded %.2f; want classic above sharded", perHandoff["classic"], perHandoff["sharded"])
	}
}

// The conformance suite on a cluster, publishing classic: sharded is the
// default, and redis-pubsub's suite runs it.
func TestConformanceOnCluster(t *testing.T) {
	d, ok := impl.Lookup("redis-fair")
	if !ok {
		t.Fatal("driver redis-fair not registered")
	}
	opts := map[string]string{redis.TopologyOption.Name: "cluster", redis.PublishOption.Name: "classic"}
	d = d.For(impl.Config{Options: opts})
	impltest.Run(t, d, sandboxtest.Start(t, d.Needs...), impltest.Options{Configure: func(cfg *impl.Config) {
		cfg.Options = opts
	}})
}
