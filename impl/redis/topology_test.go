package redis_test

import (
	"testing"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
	_ "github.com/lockbench/lockbench/impl/redisfair"
	_ "github.com/lockbench/lockbench/impl/redispubsub"
)

// The topology setting chooses what the Redisson rows need — one Redis or
// a cluster — and how they publish; sharded publishing on one Redis is
// refused, as Redisson never does it.
func TestTopologyChoosesNeedsAndPublish(t *testing.T) {
	for _, tc := range []struct {
		topology, publish string
		role, cmd         string
		refused           bool
	}{
		{"", "", "redis", "publish", false},
		{"single", "classic", "redis", "publish", false},
		{"single", "sharded", "redis", "", true},
		{"cluster", "", "redis-cluster", "spublish", false},
		{"cluster", "auto", "redis-cluster", "spublish", false},
		{"cluster", "classic", "redis-cluster", "publish", false},
		{"cluster", "sharded", "redis-cluster", "spublish", false},
	} {
		cfg := impl.Config{Options: map[string]string{redis.TopologyOption.Name: tc.topology, redis.PublishOption.Name: tc.publish}}
		for _, name := range []string{"redis-pubsub", "redis-fenced", "redis-fair"} {
			d, ok := impl.Lookup(name)
			if !ok {
				t.Fatalf("no driver %s", name)
			}
			d = d.For(cfg)
			if len(d.Needs) != 1 || d.Needs[0].Role != tc.role {
				t.Errorf("%s %s/%s: needs %+v, want the %s role", name, tc.topology, tc.publish, d.Needs, tc.role)
			}
			if err := d.Validate(cfg); (err != nil) != tc.refused {
				t.Errorf("%s %s/%s: validate %v, want refused %v", name, tc.topology, tc.publish, err, tc.refused)
			}
		}
		if !tc.refused && redis.PublishCommand(cfg) != tc.cmd {
			t.Errorf("%s/%s: publishes with %s, want %s", tc.topology, tc.publish, redis.PublishCommand(cfg), tc.cmd)
		}
	}
	// Both roles are offered, whatever the plan chooses: the CLI's
	// address flags come from them.
	roles := map[string]bool{}
	for _, n := range impl.Roles() {
		roles[n.Role] = true
	}
	if !roles["redis"] || !roles["redis-cluster"] {
		t.Errorf("roles %v, want redis and redis-cluster among them", roles)
	}
}
