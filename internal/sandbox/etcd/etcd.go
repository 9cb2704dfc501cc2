// Package etcd is the sandbox's etcd kind: a member or a cluster built
// from etcd's module, its fsync setting per profile, its version, and its
// /metrics counters and what they mean (gRPC messages, watch events).
package etcd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// etcd registers as an ensemble kind: n members form one cluster, which is
// what a driver's "etcd endpoints, comma-separated" means (the endpoints
// of one cluster, not independent servers). The default size is 1, a
// single-member cluster — the simplest, fastest to start (about 1 s) and
// the one whose counters are all on one process; --etcd-cluster 3 (or
// `lockbench sandbox --etcd 3`) starts three members for quorum writes.
func init() {
	sandbox.RegisterKind(sandbox.Kind{
		Name: serverkind.Etcd, Flag: "etcd", Ensemble: true,
		SizeFlag: "etcd-cluster", SizeUsage: "size of the sandboxed etcd cluster: 1 member or 3 (quorum writes)",
		Start:   Start,
		Find:    func() error { _, err := Find(); return err },
		Stats:   etcdStats,
		Counts:  etcdCounts,
		Version: etcdVersion,
		Settings: func(p sandbox.Profile) string {
			if p == sandbox.ProfileFast {
				return "--unsafe-no-fsync"
			}
			return "fsync on (etcd's default)"
		},
	})
}

// etcdCandidates are looked at after $LOCKBENCH_ETCD_BIN and PATH: where
// scripts/install-servers builds the server from tools/etcd.
func etcdCandidates() []string {
	if h, err := os.UserHomeDir(); err == nil {
		return []string{filepath.Join(h, ".cache", "lockbench", "bin", "etcd")}
	}
	return nil
}

// Find finds the etcd server: $LOCKBENCH_ETCD_BIN, etcd on PATH, or the
// binary scripts/install-servers builds. Debian's etcd-server (3.4) is too
// old for the flags used here (--unsafe-no-fsync came with 3.5).
func Find() (string, error) {
	missing := &sandbox.MissingError{What: "etcd (3.5 or later; $LOCKBENCH_ETCD_BIN, PATH or ~/.cache/lockbench/bin/etcd)",
		Install: "cd tools/etcd && go build -o ~/.cache/lockbench/bin/etcd ."}
	if p := os.Getenv("LOCKBENCH_ETCD_BIN"); p != "" {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		return "", missing
	}
	if p, err := exec.LookPath("etcd"); err == nil {
		return p, nil
	}
	for _, p := range etcdCandidates() {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", missing
}

// Start starts a cluster of n members on free loopback ports, each
// with a client and a peer port, and returns once every member reports
// itself healthy (which needs an elected leader). In the production
// profile its write-ahead log is fsynced as etcd's defaults do; in the fast
// one nothing is (--unsafe-no-fsync). A single member runs 10 ms heartbeats
// and a 100 ms election timeout, so that it elects itself at once; a
// cluster runs 50/500 ms, so that a loaded 2-core machine does not make
// its followers call elections mid-run. The shortest lease the server
// grants is 1.5 election timeouts, rounded up to a second: 1 s for both.
//
// A member's data directory stays across Stop and Restart: an etcd member
// comes back with its log, as a cluster member must (one restarted empty
// would not be let back in).
func Start(ctx context.Context, dir string, n int) ([]*sandbox.Server, error) {
	bin, err := Find()
	if err != nil {
		return nil, err
	}
	ports, err := sandbox.FreePorts(2 * n)
	if err != nil {
		return nil, err
	}
	peerURL := func(i int) string { return "http://127.0.0.1:" + strconv.Itoa(ports[2*i+1]) }
	var cluster []string
	for i := range n {
		cluster = append(cluster, fmt.Sprintf("etcd-%d=%s", i, peerURL(i)))
	}
	heartbeat, election := "10", "100"
	if n > 1 {
		heartbeat, election = "50", "500"
	}
	servers := make([]*sandbox.Server, n)
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("etcd-%d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		client := "http://127.0.0.1:" + strconv.Itoa(ports[2*i])
		p := sandbox.Process{
			Kind: serverkind.Etcd, Addr: "127.0.0.1:" + strconv.Itoa(ports[2*i]), Dir: d, Bin: bin,
			Log: filepath.Join(d, "etcd.log"),
			Args: []string{
				"--name", fmt.Sprintf("etcd-%d", i),
				"--data-dir", filepath.Join(d, "data"),
				"--listen-client-urls", client, "--advertise-client-urls", client,
				"--listen-peer-urls", peerURL(i), "--initial-advertise-peer-urls", peerURL(i),
				"--initial-cluster", strings.Join(cluster, ","),
				"--initial-cluster-state", "new", "--initial-cluster-token", "lockbench-" + filepath.Base(dir),
				"--heartbeat-interval", heartbeat, "--election-timeout", election,
				"--log-level", "error",
			},
			Ready: etcdReady,
		}
		if sandbox.Fast(ctx) {
			p.Args = append(p.Args, "--unsafe-no-fsync")
		}
		servers[i] = sandbox.NewServer(p)
	}
	// Members wait for each other to elect a leader: launch all, then wait.
	errc := make(chan error, n)
	for _, s := range servers {
		go func(s *sandbox.Server) { errc <- s.Launch(ctx) }(s)
	}
	var firstErr error
	for range servers {
		if err := <-errc; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return servers, firstErr
}

// etcdReady asks /health, which says {"health":"true"} once the member
// has a leader and can serve.
func etcdReady(ctx context.Context, addr string) error {
	body, err := sandbox.Get(ctx, addr, "/health", time.Second)
	if err != nil {
		return err
	}
	var h struct {
		Health string `json:"health"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(body, &h); err != nil {
		return fmt.Errorf("/health answered %q", strings.TrimSpace(string(body)))
	}
	if h.Health != "true" {
		return fmt.Errorf("/health: %q %s", h.Health, h.Reason)
	}
	return nil
}

// etcdMetrics maps the Stats keys to the samples of /metrics they sum.
//
//   - etcd_mvcc_put_total, etcd_mvcc_delete_total, etcd_mvcc_range_total:
//     operations on the key space — each put, each delete (found or not,
//     and each key a revoked or expired lease takes with it) and each
//     read, a transaction's comparisons included — whether sent alone or
//     inside a transaction; etcd_mvcc_txn_total: storage transactions that
//     did more than one of these.
//   - etcd_debugging_mvcc_events_total: watch events the member took off
//     its watchers' queues to send, one per event per watcher; events a
//     watcher's filter drops (WithFilterPut) are never queued, so not
//     counted. watch_triggered is the same figure under the name the
//     reports compare with the clients' notifications.
//   - watch_streams: Watch gRPC streams opened (a client multiplexes its
//     watches on one stream while any is open).
//   - grpc_messages_received, grpc_messages_sent: gRPC messages the member
//     read and wrote, of every method and stream — what a hand-off costs
//     it in messages.
var etcdMetrics = []struct{ key, sample string }{
	{"etcd_mvcc_put_total", "etcd_mvcc_put_total"},
	{"etcd_mvcc_delete_total", "etcd_mvcc_delete_total"},
	{"etcd_mvcc_range_total", "etcd_mvcc_range_total"},
	{"etcd_mvcc_txn_total", "etcd_mvcc_txn_total"},
	{"etcd_debugging_mvcc_events_total", "etcd_debugging_mvcc_events_total"},
	{"watch_triggered", "etcd_debugging_mvcc_events_total"},
	{"watch_streams", `grpc_server_started_total{grpc_method="Watch",grpc_service="etcdserverpb.Watch"`},
	{"grpc_messages_received", "grpc_server_msg_received_total"},
	{"grpc_messages_sent", "grpc_server_msg_sent_total"},
}

// etcdCounts: etcd's messages are the gRPC messages its members received
// and sent (a watch event is one message on its stream); its watches, the
// events its watchers were sent.
func etcdCounts(d map[string]int64) serverkind.Counts {
	w := d["watch_triggered"]
	return serverkind.Counts{Messages: d["grpc_messages_received"] + d["grpc_messages_sent"], Unit: "gRPC messages", Watches: &w}
}

// etcdStats reads /metrics from every member and sums the counters of
// etcdMetrics over them. A member that answers without
// etcd_debugging_mvcc_events_total (not an etcd, or metrics turned off)
// gives an error wrapping ErrStatsRefused.
func etcdStats(ctx context.Context, addrs []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, addr := range addrs {
		body, err := sandbox.Get(ctx, addr, "/metrics", 3*time.Second)
		if err != nil {
			return nil, fmt.Errorf("etcd metrics %s: %w", addr, err)
		}
		m := parseMetrics(string(body))
		if _, ok := m["etcd_debugging_mvcc_events_total"]; !ok {
			return nil, fmt.Errorf("etcd metrics %s: %w: no etcd_debugging_mvcc_events_total", addr, sandbox.ErrStatsRefused)
		}
		for _, em := range etcdMetrics {
			if v, ok := m[em.sample]; ok {
				out[em.key] += v
			}
		}
	}
	return out, nil
}

// parseMetrics reads Prometheus text: for each sample line, the value is
// added under the metric's name and, for a labelled sample, also under
// every prefix "name{label=\"value\"" of its labels in order, so that
// grpc_server_started_total{grpc_method="Watch" sums that method's lines.
// Values may be written as floats (1.5e+06); they are rounded.
func parseMetrics(text string) map[string]int64 {
	out := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		series, val := strings.TrimSpace(line[:i]), line[i+1:]
		if j := strings.LastIndexByte(series, ' '); j >= 0 && !strings.HasSuffix(series, "}") {
			// "name value timestamp": the value is the middle field.
			series, val = strings.TrimSpace(series[:j]), series[j+1:]
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		v := int64(math.Round(f))
		name, labels, labelled := strings.Cut(series, "{")
		out[name] += v
		if !labelled {
			continue
		}
		prefix := name + "{"
		for i, l := range sandbox.SplitLabels(strings.TrimSuffix(labels, "}")) {
			if i > 0 {
				prefix += ","
			}
			prefix += l
			out[prefix] += v
		}
	}
	return out
}

// etcdVersion asks one member for its version through /version.
func etcdVersion(ctx context.Context, addr string) string {
	body, err := sandbox.Get(ctx, addr, "/version", 2*time.Second)
	if err != nil {
		return "unreachable: " + err.Error()
	}
	var v struct {
		Server  string `json:"etcdserver"`
		Cluster string `json:"etcdcluster"`
	}
	if json.Unmarshal(body, &v) != nil || v.Server == "" {
		return "unknown"
	}
	return "etcd " + v.Server
}
