package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/serverkind"
)

func TestStartAndClose(t *testing.T) {
	need(t, serverkind.Redis, serverkind.ZooKeeper)
	ctx := context.Background()
	f, err := Start(ctx, Spec{serverkind.Redis: 2, serverkind.ZooKeeper: 1})
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
	if r, err := probe(ctx, f.Servers[serverkind.ZooKeeper][0].Addr, "mntr"); err != nil || !strings.Contains(r, "zk_sum_node_children_watch_count") {
		t.Errorf("mntr not allowed: %q %v", r, err)
	}
	var pids []int
	for _, s := range append(f.Servers[serverkind.Redis], f.Servers[serverkind.ZooKeeper]...) {
		pids = append(pids, s.cmd.Process.Pid)
	}
	dir := f.dir
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
	need(t, serverkind.Redis)
	ctx := context.Background()
	f, err := Start(ctx, Spec{serverkind.Redis: 1})
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
	if _, err := probe(ctx, s.Addr, "PING\r\n"); err == nil {
		t.Fatal("killed server still answers")
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := probe(ctx, s.Addr, "PING\r\n"); err != nil || !strings.HasPrefix(r, "+PONG") {
		t.Fatalf("after restart: %q %v", r, err)
	}
}

func TestMissingBinaryNamesPackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	saved := redisCandidates
	redisCandidates = nil
	t.Cleanup(func() { redisCandidates = saved })
	f, err := Start(context.Background(), Spec{serverkind.Redis: 1})
	if f != nil {
		f.Close()
		t.Fatal("Start returned a fleet without redis-server")
	}
	var me *MissingError
	if !errors.As(err, &me) || !errors.Is(err, ErrMissing) {
		t.Fatalf("want MissingError, got %v", err)
	}
	if !strings.Contains(err.Error(), "apt-get install -y redis-server") {
		t.Fatalf("error does not name the install command: %v", err)
	}
}

func TestEnsembleHasQuorum(t *testing.T) {
	if testing.Short() {
		t.Skip("ensemble start takes a few seconds")
	}
	need(t, serverkind.ZooKeeper)
	f, err := Start(context.Background(), Spec{serverkind.ZooKeeper: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	leaders := 0
	for _, s := range f.Servers[serverkind.ZooKeeper] {
		r, err := probe(context.Background(), s.Addr, "srvr")
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

// A port taken between the probe and the server's bind costs a retry, not
// the run.
func TestStartSurvivesATakenPort(t *testing.T) {
	need(t, serverkind.Redis)
	tries := 0
	err := retryPorts(context.Background(), func(int) error {
		tries++
		if tries < 3 {
			return fmt.Errorf("redis on 127.0.0.1:1 %w: bind: address in use", errExitedAtStart)
		}
		return nil
	})
	if err != nil || tries != 3 {
		t.Fatalf("after %d tries: %v", tries, err)
	}
	// A server that never becomes ready is stopped, not leaked, and gone
	// by the time Start returns. The server is a redis-server first on
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
	f, err := Start(ctx, Spec{serverkind.Redis: 1})
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
