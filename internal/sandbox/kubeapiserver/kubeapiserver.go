// Package kubeapiserver is the sandbox's Kubernetes API server kind: a
// kube-apiserver built from its module over an etcd of its own (package
// etcd's), its version and its counters of requests on Leases.
package kubeapiserver

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/sandbox/etcd"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// kube-apiserver registers as independent servers, each over an etcd of
// its own that the sandbox starts with it (in the run's profile: fsync on
// in production, off in fast) and stops after it. No Debian package
// carries a kube-apiserver; scripts/install-servers builds one from
// k8s.io/kubernetes (tools/kube-apiserver, about four minutes the first
// time) and the build is kept.
func init() {
	sandbox.RegisterKind(sandbox.Kind{
		Name: serverkind.KubeAPIServer, Flag: "kube-apiserver",
		Start: func(ctx context.Context, dir string, n int) ([]*sandbox.Server, error) {
			return sandbox.StartEach(ctx, dir, n, "kube-apiserver", findKubeAPIServer, startKubeAPIServer)
		},
		Find: func() error {
			if _, err := findKubeAPIServer(); err != nil {
				return err
			}
			_, err := etcd.Find()
			return err
		},
		Stats: kubeStats,
		Counts: func(d map[string]int64) serverkind.Counts {
			return serverkind.Counts{Messages: d["apiserver_lease_requests"], Unit: "apiserver Lease requests"}
		},
		Version: kubeVersion,
		Settings: func(p sandbox.Profile) string {
			if p == sandbox.ProfileFast {
				return "its etcd --unsafe-no-fsync"
			}
			return "its etcd fsync on (etcd's default)"
		},
	})
}

// findKubeAPIServer finds kube-apiserver: $LOCKBENCH_KUBE_APISERVER_BIN,
// the binary scripts/install-servers builds
// (~/.cache/lockbench/bin/kube-apiserver), or one on PATH.
func findKubeAPIServer() (string, error) {
	missing := &sandbox.MissingError{What: "kube-apiserver ($LOCKBENCH_KUBE_APISERVER_BIN, ~/.cache/lockbench/bin/kube-apiserver or PATH)",
		Install: "cd tools/kube-apiserver && go build -o ~/.cache/lockbench/bin/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver"}
	return sandbox.FindBuilt("LOCKBENCH_KUBE_APISERVER_BIN", "kube-apiserver", nil, missing)
}

// startKubeAPIServer starts one etcd member and one kube-apiserver on it,
// in dir, and returns once the apiserver's /readyz says ready. The
// apiserver serves HTTPS on a loopback port with the self-signed pair it
// writes into its --cert-dir; it takes the bearer token
// serverkind.KubeToken (group system:masters) and authorizes everything
// (AlwaysAllow), as a throwaway test cluster does. A loopback advertise
// address is refused unless the endpoint reconciler is off, so it
// advertises an address it never serves on and reconciles nothing.
func startKubeAPIServer(ctx context.Context, bin, dir string) (*sandbox.Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	backing, err := etcd.Start(ctx, filepath.Join(dir, "etcd"), 1)
	if err != nil {
		for _, s := range backing {
			s.Kill()
		}
		return nil, err
	}
	etcd := backing[0]
	files, err := kubeFiles(dir)
	if err != nil {
		etcd.Kill()
		return nil, err
	}
	ports, err := sandbox.FreePorts(1)
	if err != nil {
		etcd.Kill()
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	s := sandbox.NewServer(sandbox.Process{
		Kind: serverkind.KubeAPIServer, Addr: addr, Dir: dir, Bin: bin,
		Log: filepath.Join(dir, "kube-apiserver.log"),
		Args: []string{
			"--etcd-servers=http://" + etcd.Addr,
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(ports[0]),
			"--cert-dir=" + filepath.Join(dir, "certs"),
			"--token-auth-file=" + files.tokens,
			"--authorization-mode=AlwaysAllow",
			"--service-cluster-ip-range=10.0.0.0/24",
			"--service-account-issuer=https://127.0.0.1",
			"--service-account-key-file=" + files.key,
			"--service-account-signing-key-file=" + files.key,
			"--disable-admission-plugins=ServiceAccount",
			"--advertise-address=10.0.0.1", "--endpoint-reconciler-type=none",
			"-v=0",
		},
		Ready:   kubeReady,
		Backing: []*sandbox.Server{etcd},
	})
	return s, s.Launch(ctx)
}

// kubeFiles writes what the apiserver reads at start: the token file and
// the service-account signing key (one RSA key both signs and verifies).
type kubeFileSet struct{ tokens, key string }

func kubeFiles(dir string) (kubeFileSet, error) {
	f := kubeFileSet{tokens: filepath.Join(dir, "tokens.csv"), key: filepath.Join(dir, "sa.key")}
	line := serverkind.KubeToken + `,lockbench,lockbench,"system:masters"` + "\n"
	if err := os.WriteFile(f.tokens, []byte(line), 0o600); err != nil {
		return f, fmt.Errorf("sandbox: %w", err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return f, fmt.Errorf("sandbox: service-account key: %w", err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(f.key, pemKey, 0o600); err != nil {
		return f, fmt.Errorf("sandbox: %w", err)
	}
	return f, nil
}

// kubeHTTP is the client of the sandbox's probes of an apiserver: its
// serving certificate is self-signed, and only loopback is dialled.
var kubeHTTP = &http.Client{Transport: &http.Transport{
	DisableKeepAlives: true,
	TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
}}

// kubeGet fetches path from the apiserver at addr with the sandbox's
// token ($LOCKBENCH_KUBE_TOKEN when set).
func kubeGet(ctx context.Context, addr, path string, timeout time.Duration) ([]byte, error) {
	tok := os.Getenv("LOCKBENCH_KUBE_TOKEN")
	if tok == "" {
		tok = serverkind.KubeToken
	}
	return sandbox.GetURL(ctx, kubeHTTP, "https://"+addr+path, http.Header{"Authorization": {"Bearer " + tok}}, timeout)
}

// kubeReady asks /readyz, which answers 200 once the apiserver's
// post-start hooks have run and etcd answers.
func kubeReady(ctx context.Context, addr string) error {
	_, err := kubeGet(ctx, addr, "/readyz", time.Second)
	return err
}

// kubeStats reads each apiserver's /metrics and sums, over addrs:
//
//   - apiserver_lease_requests: requests on coordination.k8s.io Leases
//     (apiserver_request_total, resource "leases"), every verb and code —
//     what a candidate's polls and a leader's renewals cost the
//     apiserver, and what a hand-off costs it in messages; and the same
//     by verb, apiserver_lease_get, apiserver_lease_update,
//     apiserver_lease_create (the rest under apiserver_lease_other).
//   - apiserver_lease_conflicts: those answered 409 Conflict (an Update
//     that carried a stale resourceVersion: another candidate wrote
//     first).
//   - apiserver_requests: requests of every resource.
//
// The apiserver's own loops count too: it renews a Lease of its own
// (its identity, in kube-system) every 10 s, one GET and one PUT.
//   - etcd_lease_writes: writes the apiserver sent its etcd for Leases
//     (etcd_requests_total, type leases, operations create and update).
//
// An apiserver that answers without apiserver_request_total gives an
// error wrapping ErrStatsRefused.
func kubeStats(ctx context.Context, addrs []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, addr := range addrs {
		body, err := kubeGet(ctx, addr, "/metrics", 5*time.Second)
		if err != nil {
			return nil, fmt.Errorf("kube-apiserver metrics %s: %w", addr, err)
		}
		m, ok := kubeMetrics(string(body))
		if !ok {
			return nil, fmt.Errorf("kube-apiserver metrics %s: %w: no apiserver_request_total", addr, sandbox.ErrStatsRefused)
		}
		for k, v := range m {
			out[k] += v
		}
	}
	return out, nil
}

// kubeMetrics picks kubeStats's figures out of an apiserver's Prometheus
// text; false when it has no apiserver_request_total.
func kubeMetrics(text string) (map[string]int64, bool) {
	out := map[string]int64{
		"apiserver_lease_requests": 0, "apiserver_lease_get": 0, "apiserver_lease_update": 0,
		"apiserver_lease_create": 0, "apiserver_lease_other": 0, "apiserver_lease_conflicts": 0,
		"apiserver_requests": 0, "etcd_lease_writes": 0,
	}
	found := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, "{")
		if !ok || name != "apiserver_request_total" && name != "etcd_requests_total" {
			continue
		}
		labelText, val, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		if i := strings.IndexByte(val, ' '); i >= 0 {
			val = val[:i] // a timestamp follows
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		v := int64(math.Round(f))
		labels := map[string]string{}
		for _, l := range sandbox.SplitLabels(labelText) {
			k, q, _ := strings.Cut(l, "=")
			labels[k], _ = strconv.Unquote(q)
		}
		if name == "etcd_requests_total" {
			op := labels["operation"]
			if labels["resource"] == "leases" && (op == "create" || op == "update") {
				out["etcd_lease_writes"] += v
			}
			continue
		}
		found = true
		out["apiserver_requests"] += v
		if labels["resource"] != "leases" {
			continue
		}
		out["apiserver_lease_requests"] += v
		switch labels["verb"] { // the HTTP method, WATCH and LIST aside
		case "GET":
			out["apiserver_lease_get"] += v
		case "PUT":
			out["apiserver_lease_update"] += v
		case "POST":
			out["apiserver_lease_create"] += v
		default:
			out["apiserver_lease_other"] += v
		}
		if labels["code"] == "409" {
			out["apiserver_lease_conflicts"] += v
		}
	}
	return out, found
}

// kubeVersion asks one apiserver's /version.
func kubeVersion(ctx context.Context, addr string) string {
	body, err := kubeGet(ctx, addr, "/version", 2*time.Second)
	if err != nil {
		return "unreachable: " + err.Error()
	}
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if json.Unmarshal(body, &v) != nil || v.GitVersion == "" {
		return "unknown"
	}
	return "kube-apiserver " + v.GitVersion
}
