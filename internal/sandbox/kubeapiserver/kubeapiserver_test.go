package kubeapiserver

import (
	"context"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// A sandboxed kube-apiserver answers with the sandbox's token, says its
// version, reports its requests for Leases (its own identity Lease's
// among them), counts its etcd's CPU as its own, and takes that etcd with
// it when the fleet closes — while a kill of the apiserver alone leaves
// the etcd running, as a fault on it must.
func TestKubeAPIServerStartsOverItsOwnEtcd(t *testing.T) {
	sandbox.Need(t, serverkind.KubeAPIServer)
	ctx := context.Background()
	f, err := sandbox.Start(sandbox.WithProfile(ctx, sandbox.ProfileFast), sandbox.Spec{serverkind.KubeAPIServer: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	s := f.Servers[serverkind.KubeAPIServer][0]
	if len(s.Backing()) != 1 || !s.Backing()[0].Running() {
		t.Fatalf("the apiserver runs over %d servers, want its one etcd running", len(s.Backing()))
	}
	etcd := s.Backing()[0]
	k, _ := sandbox.LookupKind(serverkind.KubeAPIServer)
	if v := k.Version(ctx, s.Addr); !strings.HasPrefix(v, "kube-apiserver v1.") {
		t.Errorf("version %q", v)
	}
	stats, err := k.Stats(ctx, []string{s.Addr})
	if err != nil {
		t.Fatal(err)
	}
	if stats["apiserver_requests"] <= 0 || stats["apiserver_lease_requests"] > stats["apiserver_requests"] {
		t.Errorf("counters %v", stats)
	}
	pids, ok := sandbox.Serving(s.Addr)
	etcdPid, _ := etcd.Pid()
	if !ok || !containsInt(pids, etcdPid) {
		t.Errorf("the apiserver's processes %v leave out its etcd's %d", pids, etcdPid)
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if !etcd.Running() {
		t.Error("killing the apiserver stopped its etcd")
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatalf("restart over the same etcd: %v", err)
	}
	f.Close()
	if s.Running() || etcd.Running() {
		t.Errorf("after Close: apiserver running %v, etcd running %v", s.Running(), etcd.Running())
	}
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// The figures are picked out of an apiserver's metrics by resource, verb
// and code; other resources count only in the total.
func TestKubeMetrics(t *testing.T) {
	text := `# HELP apiserver_request_total [STABLE] Counter of apiserver requests
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="GET",version="v1"} 40
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 7
apiserver_request_total{code="409",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 3
apiserver_request_total{code="201",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="POST",version="v1"} 1
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="cluster",subresource="",verb="LIST",version="v1"} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="namespaces",scope="resource",subresource="",verb="GET",version="v1"} 1e+01
etcd_requests_total{group="coordination.k8s.io",operation="update",resource="leases"} 8
etcd_requests_total{group="coordination.k8s.io",operation="create",resource="leases"} 1
etcd_requests_total{group="coordination.k8s.io",operation="get",resource="leases"} 30
etcd_requests_total{group="",operation="update",resource="configmaps"} 5
`
	m, ok := kubeMetrics(text)
	if !ok {
		t.Fatal("no apiserver_request_total found")
	}
	want := map[string]int64{
		"apiserver_lease_requests": 53, "apiserver_lease_get": 40, "apiserver_lease_update": 10,
		"apiserver_lease_create": 1, "apiserver_lease_other": 2, "apiserver_lease_conflicts": 3,
		"apiserver_requests": 63, "etcd_lease_writes": 9,
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %d, want %d", k, m[k], v)
		}
	}
	if _, ok := kubeMetrics("etcd_requests_total{resource=\"leases\",operation=\"update\"} 1\n"); ok {
		t.Error("metrics without apiserver_request_total taken for an apiserver's")
	}
}
