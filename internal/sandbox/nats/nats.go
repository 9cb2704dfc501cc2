// Package nats is the sandbox's NATS kind: nats-server with JetStream,
// built from its module, its version and its /varz message counters.
package nats

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// nats registers as independent servers: one is what a NATS KV lock
// needs (a JetStream cluster would be an ensemble; the sandbox starts
// none). JetStream KV's per-key TTL, which the lock's lease is, came with
// server 2.11; Debian's nats-server is 2.9, so the server is built from
// its Go module (tools/nats-server) by scripts/install-servers.
func init() {
	sandbox.RegisterKind(sandbox.Kind{
		Name: serverkind.NATS, Flag: "nats",
		Start: func(ctx context.Context, dir string, n int) ([]*sandbox.Server, error) {
			return sandbox.StartEach(ctx, dir, n, "nats", findNATS, startNATS)
		},
		Find:  func() error { _, err := findNATS(); return err },
		Stats: natsStats,
		Counts: func(d map[string]int64) serverkind.Counts {
			return serverkind.Counts{Messages: d["nats_messages"], Unit: "NATS messages"}
		},
		Version: natsVersion,
		// Both profiles run JetStream as nats-server ships it: a file store
		// synced every 2 minutes (sync_interval), not on every write.
		Settings: func(sandbox.Profile) string { return "-js with nats-server's defaults (file store, sync_interval 2m)" },
	})
}

// natsMinor is the oldest nats-server minor release (2.x) the kind takes:
// per-key TTLs in JetStream KV need 2.11.
const natsMinor = 11

// findNATS finds nats-server 2.11 or later: $LOCKBENCH_NATS_BIN, the binary
// scripts/install-servers builds (~/.cache/lockbench/bin/nats-server), or
// one on PATH that is recent enough.
func findNATS() (string, error) {
	missing := &sandbox.MissingError{What: "nats-server (2.11 or later; $LOCKBENCH_NATS_BIN, ~/.cache/lockbench/bin/nats-server or PATH)",
		Install: "cd tools/nats-server && go build -o ~/.cache/lockbench/bin/nats-server github.com/nats-io/nats-server/v2"}
	return sandbox.FindBuilt("LOCKBENCH_NATS_BIN", "nats-server", natsRecent, missing)
}

// natsRecent reports whether the nats-server at p says it is 2.11 or later
// ("nats-server: v2.15.2").
func natsRecent(p string) bool {
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		return false
	}
	v := strings.TrimSpace(string(out))
	v = v[strings.LastIndexByte(v, 'v')+1:]
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return err1 == nil && err2 == nil && (major > 2 || major == 2 && minor >= natsMinor)
}

// natsMonitors maps a sandboxed server's client address to its monitoring
// address (/varz, /jsz), which the kind's Stats and Version read: clients
// name only the former.
var natsMonitors sync.Map

// startNATS starts one nats-server with JetStream, its store under dir, on
// a client port and a monitoring port, and returns once /healthz says
// JetStream is ready.
func startNATS(ctx context.Context, bin, dir string) (*sandbox.Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	ports, err := sandbox.FreePorts(2)
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	monitor := "127.0.0.1:" + strconv.Itoa(ports[1])
	natsMonitors.Store(addr, monitor)
	s := sandbox.NewServer(sandbox.Process{
		Kind: serverkind.NATS, Addr: addr, Dir: dir, Bin: bin,
		Log: filepath.Join(dir, "nats.log"),
		Args: []string{
			"-a", "127.0.0.1", "-p", strconv.Itoa(ports[0]),
			"-m", strconv.Itoa(ports[1]), "-js", "-sd", filepath.Join(dir, "js"),
			"-n", "lockbench-" + strconv.Itoa(ports[0]),
		},
		Ready: func(ctx context.Context, _ string) error {
			_, err := sandbox.Get(ctx, monitor, "/healthz?js-enabled-only=true", time.Second)
			return err
		},
	})
	return s, s.Launch(ctx)
}

// natsMonitor is the monitoring address of the sandboxed server on addr.
func natsMonitor(addr string) (string, error) {
	m, ok := natsMonitors.Load(addr)
	if !ok {
		return "", fmt.Errorf("nats %s: %w: no monitoring port known (a server the sandbox did not start)", addr, sandbox.ErrStatsRefused)
	}
	return m.(string), nil
}

// natsStats reads each server's /varz and /jsz and sums, over addrs:
//
//   - in_msgs, out_msgs, in_bytes, out_bytes: messages and bytes the
//     server received from and sent to its clients, every subject
//     (JetStream API requests, KV puts, watchers' deliveries, replies);
//     nats_messages is their sum, what a hand-off cost it in messages.
//   - js_api_total, js_api_errors: JetStream API requests (a KV get, a
//     consumer created for a watch, …) and those it refused.
func natsStats(ctx context.Context, addrs []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, addr := range addrs {
		mon, err := natsMonitor(addr)
		if err != nil {
			return nil, err
		}
		body, err := sandbox.Get(ctx, mon, "/varz", 3*time.Second)
		if err != nil {
			return nil, fmt.Errorf("nats varz %s: %w", addr, err)
		}
		var v struct {
			InMsgs   int64 `json:"in_msgs"`
			OutMsgs  int64 `json:"out_msgs"`
			InBytes  int64 `json:"in_bytes"`
			OutBytes int64 `json:"out_bytes"`
			JS       struct {
				API struct {
					Total  int64 `json:"total"`
					Errors int64 `json:"errors"`
				} `json:"api"`
			} `json:"jetstream"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return nil, fmt.Errorf("nats varz %s: %w: %v", addr, sandbox.ErrStatsRefused, err)
		}
		out["in_msgs"] += v.InMsgs
		out["out_msgs"] += v.OutMsgs
		out["in_bytes"] += v.InBytes
		out["out_bytes"] += v.OutBytes
		out["nats_messages"] += v.InMsgs + v.OutMsgs
		out["js_api_total"] += v.JS.API.Total
		out["js_api_errors"] += v.JS.API.Errors
	}
	return out, nil
}

// natsVersion asks one server's /varz for its version.
func natsVersion(ctx context.Context, addr string) string {
	mon, err := natsMonitor(addr)
	if err != nil {
		return "unknown"
	}
	body, err := sandbox.Get(ctx, mon, "/varz", 2*time.Second)
	if err != nil {
		return "unreachable: " + err.Error()
	}
	var v struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(body, &v) != nil || v.Version == "" {
		return "unknown"
	}
	return "nats-server " + v.Version
}
