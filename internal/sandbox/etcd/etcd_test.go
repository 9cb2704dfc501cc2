package etcd

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// startEtcdFleet starts etcd members for the test, or skips it, saying how
// to install etcd, when there is none.
func startEtcdFleet(t *testing.T, n int) *sandbox.Fleet {
	t.Helper()
	sandbox.Need(t, serverkind.Etcd)
	f, err := sandbox.Start(context.Background(), sandbox.Spec{serverkind.Etcd: n})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestEtcdStartsAndReports(t *testing.T) {
	f := startEtcdFleet(t, 1)
	ctx := context.Background()
	addrs := f.Addrs(serverkind.Etcd)
	if len(addrs) != 1 || !strings.HasPrefix(addrs[0], "127.0.0.1:") {
		t.Fatalf("addresses %v, want one on loopback", addrs)
	}
	body, err := sandbox.Get(ctx, addrs[0], "/health", 2*time.Second)
	if err != nil || !strings.Contains(string(body), `"health":"true"`) {
		t.Fatalf("/health: %q %v", body, err)
	}
	if v := etcdVersion(ctx, addrs[0]); !strings.HasPrefix(v, "etcd 3.") {
		t.Errorf("version %q, want etcd 3.x", v)
	}
	before, err := etcdStats(ctx, addrs)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"etcd_mvcc_delete_total", "etcd_mvcc_put_total", "etcd_debugging_mvcc_events_total", "watch_triggered", "watch_streams"} {
		if _, ok := before[k]; !ok {
			t.Errorf("Stats has no %s: %v", k, before)
		}
	}

	// One watcher, one put, one delete: the counters move by exactly that.
	// The JSON gateway's watch is a Watch gRPC stream inside the server.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := gatewayWatch(t, wctx, addrs[0], `{"create_request":{"key":"Zm9v"}}`) // key "foo"
	gatewayPost(t, addrs[0], "/v3/kv/put", `{"key":"Zm9v","value":"YmFy"}`)
	gatewayPost(t, addrs[0], "/v3/kv/deleterange", `{"key":"Zm9v"}`)
	for range 2 {
		select {
		case <-events:
		case <-time.After(5 * time.Second):
			t.Fatal("the watch saw no event")
		}
	}
	after, err := etcdStats(ctx, addrs)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]int64{"etcd_mvcc_put_total": 1, "etcd_mvcc_delete_total": 1,
		"etcd_debugging_mvcc_events_total": 2, "watch_triggered": 2, "watch_streams": 1} {
		if got := after[k] - before[k]; got != want {
			t.Errorf("%s grew by %d, want %d", k, got, want)
		}
	}
}

// gatewayWatch opens a watch through the server's JSON gateway and sends
// a value on the returned channel for every response carrying events,
// once the watch is created.
func gatewayWatch(t *testing.T, ctx context.Context, addr, create string) <-chan struct{} {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v3/watch", strings.NewReader(create))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(resp.Body)
	if !lines.Scan() || !strings.Contains(lines.Text(), `"created":true`) {
		resp.Body.Close()
		t.Fatalf("watch not created: %q %v", lines.Text(), lines.Err())
	}
	out := make(chan struct{}, 16)
	go func() {
		defer resp.Body.Close()
		for lines.Scan() {
			if strings.Contains(lines.Text(), `"events"`) {
				out <- struct{}{}
			}
		}
	}()
	return out
}

func gatewayPost(t *testing.T, addr, path, body string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", path, resp.Status)
	}
}

func TestEtcdClusterOfThree(t *testing.T) {
	if testing.Short() {
		t.Skip("a cluster takes a few seconds to start")
	}
	f := startEtcdFleet(t, 3)
	addrs := f.Addrs(serverkind.Etcd)
	if len(addrs) != 3 {
		t.Fatalf("%d members, want 3", len(addrs))
	}
	ctx := context.Background()
	gatewayPost(t, addrs[0], "/v3/kv/put", `{"key":"Zm9v","value":"YmFy"}`)
	// The put is replicated: every member applied it.
	deadline := time.Now().Add(5 * time.Second)
	for _, a := range addrs {
		for {
			m, err := etcdStats(ctx, []string{a})
			if err != nil {
				t.Fatal(err)
			}
			if m["etcd_mvcc_put_total"] == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("member %s applied %d puts, want 1", a, m["etcd_mvcc_put_total"])
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	sum, err := etcdStats(ctx, addrs)
	if err != nil || sum["etcd_mvcc_put_total"] != 3 {
		t.Fatalf("puts summed over the cluster: %d (%v), want 3", sum["etcd_mvcc_put_total"], err)
	}
}

func TestEtcdMissingSaysHowToInstall(t *testing.T) {
	t.Setenv("LOCKBENCH_ETCD_BIN", filepath.Join(t.TempDir(), "no-etcd"))
	f, err := sandbox.Start(context.Background(), sandbox.Spec{serverkind.Etcd: 1})
	if f != nil {
		f.Close()
		t.Fatal("Start returned a fleet without an etcd binary")
	}
	var me *sandbox.MissingError
	if !errors.As(err, &me) || !errors.Is(err, sandbox.ErrMissing) {
		t.Fatalf("want sandbox.MissingError, got %v", err)
	}
	if !strings.Contains(err.Error(), "scripts/install-servers") {
		t.Fatalf("error does not name scripts/install-servers: %v", err)
	}
}

func TestEtcdStatsRefusedByANonEtcd(t *testing.T) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("go_goroutines 7\n"))
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	go srv.Serve(ln)
	defer srv.Close()
	if _, err := etcdStats(context.Background(), []string{addr}); !errors.Is(err, sandbox.ErrStatsRefused) {
		t.Fatalf("stats of a server without etcd metrics: %v, want ErrStatsRefused", err)
	}
}

func TestParseMetrics(t *testing.T) {
	m := parseMetrics(`# HELP etcd_mvcc_put_total Total number of puts seen by this member.
# TYPE etcd_mvcc_put_total counter
etcd_mvcc_put_total 1.234567e+06
etcd_mvcc_delete_total 12 1700000000000
grpc_server_started_total{grpc_method="Watch",grpc_service="etcdserverpb.Watch",grpc_type="bidi_stream"} 4
grpc_server_started_total{grpc_method="Watch",grpc_service="grpc.health.v1.Health",grpc_type="server_stream"} 1
grpc_server_started_total{grpc_method="Txn",grpc_service="etcdserverpb.KV",grpc_type="unary"} 9
odd{a="x y",b="1,2"} 3
nan_gauge NaN
`)
	for k, want := range map[string]int64{
		"etcd_mvcc_put_total":                           1234567,
		"etcd_mvcc_delete_total":                        12,
		"grpc_server_started_total":                     14,
		`grpc_server_started_total{grpc_method="Watch"`: 5,
		`grpc_server_started_total{grpc_method="Watch",grpc_service="etcdserverpb.Watch"`: 4,
		`odd{a="x y",b="1,2"`: 3,
	} {
		if got := m[k]; got != want {
			t.Errorf("%s = %d, want %d", k, got, want)
		}
	}
	if _, ok := m["nan_gauge"]; ok {
		t.Error("NaN read as a number")
	}
}
