package engine

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// soloCoord is a Coordinator for one shard whose partners are elsewhere:
// it starts after lead and notes when Serve ends.
type soloCoord struct {
	lead   time.Duration
	served chan struct{} // closed when Serve returns
}

func (c *soloCoord) Start(context.Context, Meeting) (time.Time, error) {
	return time.Now().Add(c.lead), nil
}
func (c *soloCoord) Done(context.Context, Meeting) error { return nil }
func (c *soloCoord) Settle(ctx context.Context, _ Meeting, local func(context.Context)) error {
	local(ctx)
	return nil
}
func (c *soloCoord) Serve(ctx context.Context, _ Meeting, _ func(context.Context)) {
	<-ctx.Done()
	close(c.served)
}

// A shard sees only its own clients: none of them holding and all trying
// is what it sees while another shard's client holds the lock. A sharded
// cell therefore never ends in a livelock finding, where the same clients
// in one process would (TestNoGrantWhileTryingIsALivelock).
//
// Not parallel: its retrying clients would load the timing-sensitive
// open-loop tests that run in parallel.
func TestAShardFindsNoLivelock(t *testing.T) {
	cfg := impl.Config{Retry: 10 * time.Millisecond, TTL: 50 * time.Millisecond, Namespace: "stuck-shard"}
	sh := &Shard{Index: 0, Count: 2, Coord: &soloCoord{served: make(chan struct{})}}
	c, err := RunCell(context.Background(), CellSpec{Impl: "test-stuck", Scenario: scenario(t, "hot"), Clients: 4,
		Duration: time.Second, Config: cfg, Shard: sh})
	if err != nil {
		t.Fatal(err)
	}
	if c.Finding != "" || c.Livelock != nil || c.Acquires != 0 || c.Retries == 0 {
		t.Errorf("finding %q, livelock %+v, %d acquires, %d retries; want no finding over a full second of retries", c.Finding, c.Livelock, c.Acquires, c.Retries)
	}
}

// A burst's shard interrupted while it waits for the common start stops
// answering other shards' settle calls and closes its grants' stream: no
// goroutine of the cell outlives it.
func TestAnInterruptedShardLeavesNothingRunning(t *testing.T) {
	coord := &soloCoord{lead: time.Hour, served: make(chan struct{})}
	sh := &Shard{Index: 0, Count: 2, Coord: coord, Grants: func(result.Cell, []result.Grant) {}}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := RunCell(ctx, CellSpec{Impl: "inproc", Scenario: scenario(t, "burst"), Clients: 4,
		Config: impl.Config{Namespace: t.Name()}, Shard: sh})
	if err == nil {
		t.Fatal("a cell interrupted before its start returned no error")
	}
	select {
	case <-coord.served:
	case <-time.After(10 * time.Second):
		t.Fatal("the burst's Serve still runs after the cell returned")
	}
}
