package lockbench_test

import (
	"context"
	"testing"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/sandboxtest"
)

// A cell on servers lockbench started records each one's CPU time beside
// lockbench's own, so a reader sees which side was the limit.
func TestCellRecordsTheServersCPU(t *testing.T) {
	srv := sandboxtest.Start(t, redis.Need)
	hot, _ := lockbench.LookupScenario("hot")
	c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
		Impl: "redis", Scenario: hot, Clients: 4, Locks: 4, Acquires: 20000,
		ServerKinds: sandbox.Meter{},
		Config:      impl.Config{Servers: srv, Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	addr := srv[redis.Need.Role][0]
	if s, ok := c.Generator.ServerCPUSeconds[addr]; !ok || s <= 0 || c.Generator.CPUSeconds <= 0 {
		t.Errorf("server CPU %v (of %v), lockbench CPU %v: want both measured", s, c.Generator.ServerCPUSeconds, c.Generator.CPUSeconds)
	}
}
