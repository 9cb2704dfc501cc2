package lockbench_test

import (
	"testing"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
)

// A role is served only by a fleet that has enough servers for it: one
// Redis serves the single-instance lock, not five Redlock masters (whose
// LOCKBENCH_REDLOCK line would break a later run), and an ensemble serves
// whatever its size.
func TestRoleAddrsNeedEnoughServers(t *testing.T) {
	one := &sandbox.Fleet{Servers: map[string][]*sandbox.Server{
		sandbox.KindRedis:     {{Addr: "127.0.0.1:1"}},
		sandbox.KindZooKeeper: {{Addr: "127.0.0.1:2"}, {Addr: "127.0.0.1:3"}, {Addr: "127.0.0.1:4"}},
	}}
	single := impl.Need{Role: "single", Kind: sandbox.KindRedis, Count: 1}
	masters := impl.Need{Role: "masters", Kind: sandbox.KindRedis, Count: 5}
	ensemble := impl.Need{Role: "ens", Kind: sandbox.KindZooKeeper, Count: 1}
	if got := lockbench.RoleAddrs(one, single); len(got) != 1 {
		t.Errorf("one Redis for a single server: %v", got)
	}
	if got := lockbench.RoleAddrs(one, masters); got != nil {
		t.Errorf("one Redis served five masters: %v", got)
	}
	if got := lockbench.RoleAddrs(one, ensemble); len(got) != 3 {
		t.Errorf("an ensemble of three served %v", got)
	}
}
