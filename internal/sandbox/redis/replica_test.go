package redis

import (
	"context"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
)

func TestReplicaFollowsMaster(t *testing.T) {
	sandbox.Need(t, serverkind.Redis)
	ctx := context.Background()
	f, err := sandbox.Start(ctx, sandbox.Spec{serverkind.Redis: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := command(ctx, f.Servers[serverkind.Redis][0].Addr, "SET", "k", "before"); err != nil {
		t.Fatal(err)
	}
	r, err := StartReplica(ctx, f.Servers[serverkind.Redis][0], "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Stop() })
	if !strings.HasPrefix(r.Dir(), f.Dir()) {
		t.Errorf("replica dir %s outside the fleet's %s", r.Dir(), f.Dir())
	}
	// The initial sync is done when StartReplica returns.
	if v, err := command(ctx, r.Addr, "GET", "k"); err != nil || v != "before" {
		t.Fatalf("replica GET k = %q, %v; want the master's value", v, err)
	}
	if _, err := command(ctx, r.Addr, "SET", "k", "x"); err == nil || !strings.Contains(err.Error(), "READONLY") {
		t.Fatalf("replica accepted a write: %v", err)
	}
	if _, err := StartReplica(ctx, sandbox.NewServer(sandbox.Process{Kind: "zookeeper"}), ""); err == nil {
		t.Fatal("StartReplica of a ZooKeeper server did not fail")
	}
}
