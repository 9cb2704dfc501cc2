package zookeeper

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// watchCounters are the mntr summaries whose sums count watches triggered,
// one per watcher notified.
var watchCounters = []string{
	"zk_sum_node_children_watch_count",
	"zk_sum_node_deleted_watch_count",
	"zk_sum_node_created_watch_count",
	"zk_sum_node_changed_watch_count",
}

// zkStats reads mntr from every server of an ensemble and sums it:
// watch_triggered (all watch notifications the servers sent),
// packets_sent and packets_received. A server that refuses mntr gives an
// error wrapping ErrStatsRefused.
func zkStats(ctx context.Context, addrs []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, addr := range addrs {
		m, err := Mntr(ctx, addr)
		if err != nil {
			return nil, err
		}
		for _, k := range watchCounters {
			out["watch_triggered"] += m[k]
		}
		out["packets_sent"] += m["zk_packets_sent"]
		out["packets_received"] += m["zk_packets_received"]
	}
	return out, nil
}

// zkCounts: ZooKeeper's messages are the packets its servers received
// and sent; its watches, every watch notification they sent.
func zkCounts(d map[string]int64) serverkind.Counts {
	w := d["watch_triggered"]
	return serverkind.Counts{Messages: d["packets_received"] + d["packets_sent"], Unit: "packets", Watches: &w}
}

// Mntr asks one server for its mntr counters (integers only).
func Mntr(ctx context.Context, addr string) (map[string]int64, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("zk mntr %s: unreachable: %w", addr, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(c, "mntr"); err != nil {
		return nil, fmt.Errorf("zk mntr %s: %w", addr, err)
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(c)
	var first string
	for sc.Scan() {
		line := sc.Text()
		if first == "" {
			first = line
		}
		k, v, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	if _, ok := out["zk_packets_sent"]; !ok {
		return nil, fmt.Errorf("zk mntr %s: %w: %q", addr, sandbox.ErrStatsRefused, strings.TrimSpace(first))
	}
	return out, nil
}
