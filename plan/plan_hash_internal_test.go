package plan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockbench/lockbench/result"
)

// --renew and --acquire-timeout change what every cell measures: they are
// of the plan, in meta.json and in the hash shards meet and merge by, so
// shards that differ in them are refused and compare names the difference.
func TestPlanHashCoversRenewAndAcquireTimeout(t *testing.T) {
	base := Plan{Impls: []string{"redis"}, Scenarios: []string{"hot"}, Clients: []int{4}}
	renew, timeout := base, base
	renew.Cell.Renew = true
	timeout.Cell.AcquireTimeout = 50 * time.Millisecond
	h := base.PlanHash()
	if renew.PlanHash() == h {
		t.Error("--renew does not change the plan hash")
	}
	if timeout.PlanHash() == h {
		t.Error("--acquire-timeout does not change the plan hash")
	}
	for name, p := range map[string]Plan{"renew": renew, "acquire_timeout_s": timeout} {
		b, err := json.Marshal(p.meta(time.Time{}, &provisioned{}))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "meta.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := result.ReadMeta(path)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range m.Fields {
			found = found || f.Key == name
		}
		if !found {
			t.Errorf("meta.json has no %s: %s", name, b)
		}
	}
}
