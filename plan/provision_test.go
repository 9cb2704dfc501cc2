package plan_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/plan"
)

// A role is served only by a fleet that has enough servers for it: one
// Redis serves the single-instance lock, not five Redlock masters (whose
// LOCKBENCH_REDLOCK line would break a later run), and an ensemble serves
// whatever its size.
func TestRoleAddrsNeedEnoughServers(t *testing.T) {
	one := &sandbox.Fleet{Servers: map[string][]*sandbox.Server{
		serverkind.Redis:     {{Addr: "127.0.0.1:1"}},
		serverkind.ZooKeeper: {{Addr: "127.0.0.1:2"}, {Addr: "127.0.0.1:3"}, {Addr: "127.0.0.1:4"}},
	}}
	single := impl.Need{Role: "single", Kind: serverkind.Redis, Count: 1}
	masters := impl.Need{Role: "masters", Kind: serverkind.Redis, Count: 5}
	ensemble := impl.Need{Role: "ens", Kind: serverkind.ZooKeeper, Count: 1}
	if got := plan.RoleAddrs(one, single); len(got) != 1 {
		t.Errorf("one Redis for a single server: %v", got)
	}
	if got := plan.RoleAddrs(one, masters); got != nil {
		t.Errorf("one Redis served five masters: %v", got)
	}
	if got := plan.RoleAddrs(one, ensemble); len(got) != 3 {
		t.Errorf("an ensemble of three served %v", got)
	}
	// Fewer servers than the role's count serve it when its own check
	// allows them: three or four Redis serve three odd-numbered masters.
	odd := func(a []string) error {
		if len(a) < 3 || len(a)%2 == 0 {
			return errors.New("want an odd number ≥ 3")
		}
		return nil
	}
	masters.Check = odd
	for have, want := range map[int]int{1: 0, 2: 0, 3: 3, 4: 3, 5: 5, 7: 5} {
		f := &sandbox.Fleet{Servers: map[string][]*sandbox.Server{}}
		for i := range have {
			f.Servers[serverkind.Redis] = append(f.Servers[serverkind.Redis], &sandbox.Server{Addr: fmt.Sprintf("127.0.0.1:%d", 10+i)})
		}
		if got := plan.RoleAddrs(f, masters); len(got) != want {
			t.Errorf("%d Redis served %d of five odd-numbered masters, want %d", have, len(got), want)
		}
	}
}
