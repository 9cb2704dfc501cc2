package redispubsub

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/sandboxtest"
)

// clusterNeed is a Redis Cluster for the measurement below.
var clusterNeed = impl.Need{Role: "redis-cluster", Kind: serverkind.RedisCluster}

// TestMeasureClusterPublish measures what one unlock message costs a Redis
// Cluster of 3 and of 6 masters when waiters listen with SUBSCRIBE (the
// unlock PUBLISHed: every node forwards it over the cluster bus) or with
// SSUBSCRIBE (SPUBLISHed: it stays on the channel's shard): bus messages,
// client bytes and commands per unlock, from the nodes' own counters
// (CLUSTER INFO, INFO stats, INFO commandstats). Eight waiters, each on a
// connection of its own, hear every message; 500 unlocks a cell. It
// reports figures, asserts only that every waiter heard every unlock, and
// runs only with LOCKBENCH_MEASURE=1.
func TestMeasureClusterPublish(t *testing.T) {
	if os.Getenv("LOCKBENCH_MEASURE") != "1" {
		t.Skip("set LOCKBENCH_MEASURE=1 to measure")
	}
	for _, masters := range []int{3, 6} {
		servers := sandboxtest.StartSized(t, map[string]int{serverkind.RedisCluster: masters}, clusterNeed)
		addrs := servers[clusterNeed.Role]
		for _, sharded := range []bool{false, true} {
			d := measureClusterPublish(t, addrs, sharded, 8, 500)
			mode := "classic PUBLISH"
			if sharded {
				mode = "sharded SPUBLISH"
			}
			per := func(k string) float64 { return float64(d[k]) / 500 }
			t.Logf("%d masters, %-16s per unlock: bus messages sent %.1f (publish %.1f, publishshard %.1f), received %.1f; client bytes in %.0f out %.0f; commands %.2f",
				masters, mode, per("cluster_messages_sent"), per("cluster_stats_messages_publish_sent"),
				per("cluster_stats_messages_publishshard_sent"), per("cluster_messages_received"),
				per("net_input_bytes"), per("net_output_bytes"), per("cmdstat_publish_calls")+per("cmdstat_spublish_calls"))
		}
	}
}

// measureClusterPublish subscribes waiters to one lock's channel, sends
// unlocks messages, waits until every waiter heard each, and returns the
// cluster's counter deltas over the unlocks.
func measureClusterPublish(t *testing.T, addrs []string, sharded bool, waiters, unlocks int) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	ch := Channel(Key(fmt.Sprintf("cluster-%d-%v", len(addrs), sharded), "l"))
	heard := make(chan struct{}, waiters*unlocks)
	for range waiters {
		c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs})
		t.Cleanup(func() { c.Close() })
		var sub *goredis.PubSub
		if sharded {
			sub = c.SSubscribe(ctx, ch)
		} else {
			sub = c.Subscribe(ctx, ch)
		}
		if _, err := sub.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sub.Close() })
		go func() {
			for range sub.Channel() {
				heard <- struct{}{}
			}
		}()
	}
	pub := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs})
	defer pub.Close()
	if err := pub.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	k, _ := sandbox.LookupKind(serverkind.RedisCluster)
	time.Sleep(200 * time.Millisecond) // let the gossip of the subscriptions settle
	before, err := k.Stats(ctx, addrs)
	if err != nil {
		t.Fatal(err)
	}
	for range unlocks {
		var err error
		if sharded {
			err = pub.SPublish(ctx, ch, unlockMessage).Err()
		} else {
			err = pub.Publish(ctx, ch, unlockMessage).Err()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range waiters * unlocks {
		select {
		case <-heard:
		case <-time.After(10 * time.Second):
			t.Fatalf("the waiters heard %d of %d messages", i, waiters*unlocks)
		}
	}
	after, err := k.Stats(ctx, addrs)
	if err != nil {
		t.Fatal(err)
	}
	d := map[string]int64{}
	for key, v := range after {
		d[key] = v - before[key]
	}
	return d
}
