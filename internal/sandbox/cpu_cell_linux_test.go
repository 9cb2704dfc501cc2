package sandbox_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	_ "github.com/lockbench/lockbench/impl/all"
	"github.com/lockbench/lockbench/impl/zk"
	"github.com/lockbench/lockbench/internal/sandbox"
	_ "github.com/lockbench/lockbench/internal/sandbox/kinds"
	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/sandboxtest"
)

// Over a cell of seconds, the server CPU a cell records (per thread, in
// nanoseconds) agrees with the kernel's 10 ms ticks of the same process
// read around the cell; the ticks also count connecting and cleaning up,
// so they may be a little higher, never lower by more than a tick per
// thread's rounding.
func TestServerCPUAgreesWithTicksOverALongCell(t *testing.T) {
	if testing.Short() {
		t.Skip("a 4 s cell")
	}
	f := sandboxtest.StartFleet(t, sandbox.Spec{serverkind.ZooKeeper: 1})
	addr := f.Servers[serverkind.ZooKeeper][0].Addr
	hot, _ := lockbench.LookupScenario("hot")
	before, ok := sandbox.TicksCPU(addr)
	if !ok {
		t.Fatal("no ticks for the server")
	}
	c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
		Impl: "zk-pred", Scenario: hot, Clients: 8, Duration: 4 * time.Second, Warmup: 1,
		ServerKinds: sandbox.Meter{},
		Config:      impl.Config{Servers: impl.Servers{zk.Ensemble.Role: {addr}}, Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := sandbox.TicksCPU(addr)
	ticks := (after - before).Seconds()
	cell := c.Generator.ServerCPUSeconds[addr]
	t.Logf("server CPU over the cell: %.4f s from schedstat, %.2f s from ticks around it (%.1f%% apart)", cell, ticks, 100*(ticks-cell)/ticks)
	if cell <= 0 || math.Abs(ticks-cell) > 0.15*ticks+0.1 {
		t.Errorf("schedstat %.4f s, ticks %.2f s: more than 15%% apart", cell, ticks)
	}
}
