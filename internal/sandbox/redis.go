package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/internal/serverkind"
)

func init() {
	RegisterKind(Kind{
		Name: serverkind.Redis, Flag: "redis",
		Start: func(ctx context.Context, dir string, n int) ([]*Server, error) {
			return startEach(ctx, dir, n, "redis", findRedis, func(ctx context.Context, bin, dir string) (*Server, error) {
				return startRedis(ctx, bin, dir, !fast(ctx))
			})
		},
		Find:      func() error { _, err := findRedis(); return err },
		Stats:     redisStats,
		Counts:    redisCounts,
		Version:   redisVersion,
		Replicate: StartReplica,
		Promote:   promote,
		Settings: func(p Profile) string {
			if p == ProfileFast {
				return "--save ''"
			}
			return "--save '" + redisSave + "' (Debian's redis.conf leaves Redis's own rules)"
		},
	})
}

// redisSave is when Redis snapshots its data by default — after 3600 s
// with a change, 300 s with 100, 60 s with 10,000 — which Debian's
// redis.conf leaves in force (its save lines are comments). A snapshot
// forks the server; its stats count the forks (total_forks), so that a
// cell can say when one fell inside it.
const redisSave = "3600 1 300 100 60 10000"

// redisCandidates are looked at when redis-server is not on PATH (sbin is
// often missing from a user's PATH).
var redisCandidates = []string{"/usr/bin/redis-server", "/usr/sbin/redis-server", "/usr/local/bin/redis-server", "/opt/homebrew/bin/redis-server"}

func findRedis() (string, error) {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	for _, p := range redisCandidates {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", &MissingError{What: "redis-server", Install: "apt-get install -y redis-server"}
}

func startRedis(ctx context.Context, bin, dir string, snapshots bool) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	save := ""
	if snapshots {
		save = redisSave
	}
	s := &Server{
		Kind: serverkind.Redis, Addr: addr, dir: dir, bin: bin,
		logPath: filepath.Join(dir, "redis.log"),
		args: []string{
			"--port", strconv.Itoa(ports[0]), "--bind", "127.0.0.1",
			"--save", save, "--appendonly", "no", "--dir", dir,
			"--daemonize", "no", "--protected-mode", "no",
			"--maxclients", "10000", "--logfile", "",
		},
		ready: redisReady,
	}
	return s, s.start(ctx)
}

// startEach starts n independent servers of one binary, found by find,
// each in a directory of its own (prefix-0, prefix-1, …), and returns
// those started so far with the first error.
func startEach(ctx context.Context, dir string, n int, prefix string, find func() (string, error),
	start func(ctx context.Context, bin, dir string) (*Server, error)) ([]*Server, error) {
	bin, err := find()
	if err != nil {
		return nil, err
	}
	var out []*Server
	for i := range n {
		s, err := start(ctx, bin, filepath.Join(dir, fmt.Sprintf("%s-%d", prefix, i)))
		if s != nil {
			out = append(out, s)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// redisReady is a Redis server's readiness probe, one node's or a
// cluster member's: it answers PING.
func redisReady(ctx context.Context, addr string) error {
	r, err := probe(ctx, addr, "PING\r\n")
	if err != nil {
		return err
	}
	if !strings.HasPrefix(r, "+PONG") {
		return fmt.Errorf("PING answered %q", r)
	}
	return nil
}
