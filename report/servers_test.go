package report

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

// The run's servers are described from meta.json: the profile with each
// kind's settings, the disk's fdatasync against etcd's 10 ms bar, and a
// warm-up that hit its bound says the first cells may still be warming.
func TestServersText(t *testing.T) {
	t.Parallel()
	m := result.Meta{ServerProfile: "production",
		ServerSettings: []result.ServerSetting{{Kind: "zookeeper", Settings: "forceSync=yes"}},
		DiskSync:       &result.DiskSync{Bytes: 2300, Count: 500, P50Ms: 0.2, P99Ms: 12},
		ServerWarmup:   []result.ServerWarmup{{Kind: "zookeeper", Impl: "zk-pred", Clients: 32, Seconds: 30, BoundS: 30, RatesPerS: []float64{900, 1500}}}}
	s := serversText(m)
	for _, want := range []string{"production server profile (zookeeper: forceSync=yes)", "p99 12.0ms", "slower than the 10 ms p99", "the 30 s bound"} {
		if !strings.Contains(s, want) {
			t.Errorf("serversText lacks %q: %s", want, s)
		}
	}
	if serversText(result.Meta{}) != "" {
		t.Error("a run from before profiles is described")
	}
	vs := withServers([]VerdictLine{{Question: "Limit", Answer: "neither side"}}, m)
	if !strings.Contains(vs[0].Answer, "servers in the production profile, disk fdatasync p99") {
		t.Errorf("Limit line: %s", vs[0].Answer)
	}
	c := Cell{Impl: "redis", Scenario: "hot", Clients: 8, ServerCounts: &result.ServerCounts{Forks: 1}}
	if s := snapshotText([]Cell{c}); !strings.Contains(s, "1 fork") {
		t.Errorf("snapshotText = %q", s)
	}
}
