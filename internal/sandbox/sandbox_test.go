package sandbox_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/serverkind"

	"github.com/lockbench/lockbench/internal/sandbox"
	_ "github.com/lockbench/lockbench/internal/sandbox/kinds"
)

func TestStartAndClose(t *testing.T) {
	sandbox.Need(t, serverkind.Redis, serverkind.ZooKeeper)
	ctx := context.Background()
	f, err := sandbox.Start(ctx, sandbox.Spec{serverkind.Redis: 2, serverkind.ZooKeeper: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Servers[serverkind.Redis]) != 2 || len(f.Servers[serverkind.ZooKeeper]) != 1 {
		t.Fatalf("got %d redis, %d zk", len(f.Servers[serverkind.Redis]), len(f.Servers[serverkind.ZooKeeper]))
	}
	if f.Servers[serverkind.Redis][0].Addr == f.Servers[serverkind.Redis][1].Addr {
		t.Fatalf("two servers on one address %s", f.Servers[serverkind.Redis][0].Addr)
	}
	for _, s := range append(f.Servers[serverkind.Redis], f.Servers[serverkind.ZooKeeper]...) {
		if !strings.HasPrefix(s.Addr, "127.0.0.1:") {
			t.Errorf("%s not on loopback: %s", s.Kind, s.Addr)
		}
	}
	if r, err := sandbox.Probe(ctx, f.Servers[serverkind.ZooKeeper][0].Addr, "mntr"); err != nil || !strings.Contains(r, "zk_sum_node_children_watch_count") {
		t.Errorf("mntr not allowed: %q %v", r, err)
	}
	var pids []int
	for _, s := range append(f.Servers[serverkind.Redis], f.Servers[serverkind.ZooKeeper]...) {
		pid, ok := s.Pid()
		if !ok {
			t.Fatalf("%s on %s is not running", s.Kind, s.Addr)
		}
		pids = append(pids, pid)
	}
	dir := f.Dir()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("pid %d still alive after Close (%v)", pid, err)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("temp dir %s left behind", dir)
	}
}

func TestRestartKilledRedis(t *testing.T) {
	sandbox.Need(t, serverkind.Redis)
	ctx := context.Background()
	f, err := sandbox.Start(ctx, sandbox.Spec{serverkind.Redis: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	s := f.Servers[serverkind.Redis][0]
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if s.Running() {
		t.Fatal("running after Kill")
	}
	if _, err := sandbox.Probe(ctx, s.Addr, "PING\r\n"); err == nil {
		t.Fatal("killed server still answers")
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := sandbox.Probe(ctx, s.Addr, "PING\r\n"); err != nil || !strings.HasPrefix(r, "+PONG") {
		t.Fatalf("after restart: %q %v", r, err)
	}
}

func TestEnsembleHasQuorum(t *testing.T) {
	if testing.Short() {
		t.Skip("ensemble start takes a few seconds")
	}
	sandbox.Need(t, serverkind.ZooKeeper)
	f, err := sandbox.Start(context.Background(), sandbox.Spec{serverkind.ZooKeeper: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	leaders := 0
	for _, s := range f.Servers[serverkind.ZooKeeper] {
		r, err := sandbox.Probe(context.Background(), s.Addr, "srvr")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(r, "Mode: leader") {
			leaders++
		}
	}
	if leaders != 1 {
		t.Fatalf("want one leader, got %d", leaders)
	}
}

// A server that never becomes ready is stopped, not leaked, and gone by
// the time Start returns.
func TestStartStopsAServerNeverReady(t *testing.T) {
	sandbox.Need(t, serverkind.Redis)
	// The server is a redis-server first on
	// PATH that never answers; its temp dir is under our own TMPDIR, so
	// pgrep sees no other test's servers.
	bin := t.TempDir()
	fake := "#!/bin/sh\nsleep 60\n"
	if err := os.WriteFile(filepath.Join(bin, "redis-server"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	f, err := sandbox.Start(ctx, sandbox.Spec{serverkind.Redis: 1})
	if err == nil {
		f.Close()
		t.Fatal("a redis-server that never answers PING was taken as ready")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("not ready: %v, want the start's deadline", err)
	}
	if out, _ := exec.Command("pgrep", "-f", tmp).Output(); len(out) > 0 {
		t.Errorf("a server that was not ready is still running: %s", out)
	}
}
