// Package redis is the sandbox's Redis kind: Debian's redis-server on a
// free loopback port, its snapshot rules per profile, its version, its
// counters (INFO commandstats and forks) and what they mean, and what a
// failover may do to it (a replica, promoted).
package redis

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
)

func init() {
	sandbox.RegisterKind(sandbox.Kind{
		Name: serverkind.Redis, Flag: "redis",
		Start: func(ctx context.Context, dir string, n int) ([]*sandbox.Server, error) {
			return sandbox.StartEach(ctx, dir, n, "redis", Find, func(ctx context.Context, bin, dir string) (*sandbox.Server, error) {
				return startRedis(ctx, bin, dir, !sandbox.Fast(ctx))
			})
		},
		Find:      func() error { _, err := Find(); return err },
		Stats:     Stats,
		Counts:    redisCounts,
		Version:   Version,
		Replicate: StartReplica,
		Promote:   promote,
		Settings: func(p sandbox.Profile) string {
			if p == sandbox.ProfileFast {
				return "--save ''"
			}
			return "--save '" + Save + "' (Debian's redis.conf leaves Redis's own rules)"
		},
	})
}

// Save is when Redis snapshots its data by default — after 3600 s
// with a change, 300 s with 100, 60 s with 10,000 — which Debian's
// redis.conf leaves in force (its save lines are comments). A snapshot
// forks the server; its stats count the forks (total_forks), so that a
// cell can say when one fell inside it.
const Save = "3600 1 300 100 60 10000"

// redisCandidates are looked at when redis-server is not on PATH (sbin is
// often missing from a user's PATH).
var redisCandidates = []string{"/usr/bin/redis-server", "/usr/sbin/redis-server", "/usr/local/bin/redis-server", "/opt/homebrew/bin/redis-server"}

func Find() (string, error) {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	for _, p := range redisCandidates {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", &sandbox.MissingError{What: "redis-server", Install: "apt-get install -y redis-server"}
}

func startRedis(ctx context.Context, bin, dir string, snapshots bool) (*sandbox.Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	ports, err := sandbox.FreePorts(1)
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	save := ""
	if snapshots {
		save = Save
	}
	s := sandbox.NewServer(sandbox.Process{
		Kind: serverkind.Redis, Addr: addr, Dir: dir, Bin: bin,
		Log: filepath.Join(dir, "redis.log"),
		Args: []string{
			"--port", strconv.Itoa(ports[0]), "--bind", "127.0.0.1",
			"--save", save, "--appendonly", "no", "--dir", dir,
			"--daemonize", "no", "--protected-mode", "no",
			"--maxclients", "10000", "--logfile", "",
		},
		Ready: Ready,
	})
	return s, s.Launch(ctx)
}

// Ready is a Redis server's readiness probe, one node's or a
// cluster member's: it answers PING.
func Ready(ctx context.Context, addr string) error {
	r, err := sandbox.Probe(ctx, addr, "PING\r\n")
	if err != nil {
		return err
	}
	if !strings.HasPrefix(r, "+PONG") {
		return fmt.Errorf("PING answered %q", r)
	}
	return nil
}
