package cli

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/sandbox"
)

// sandbox --check says per kind what the sandbox would find, starting
// nothing: scripts/install-servers installs what it names missing, so
// the install step and the tests share one notion of installed.
func TestSandboxCheckNamesWhatIsMissing(t *testing.T) {
	t.Setenv("LOCKBENCH_ETCD_BIN", t.TempDir()+"/no-etcd")
	code, stdout, stderr := run("sandbox", "--check")
	if code != ExitFailure || !strings.Contains(stdout, "missing etcd: ") || !strings.Contains(stdout, "go build") ||
		!strings.HasPrefix(stderr, "lockbench: not installed: etcd") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %d, a line naming etcd missing with how to build it", code, stdout, stderr, ExitFailure)
	}
	if n := strings.Count(stdout, "\n"); n < 3 {
		t.Errorf("%d lines, want one per server kind:\n%s", n, stdout)
	}
}

// sandbox --check --impl names only the kinds those rows need, so that
// the install step builds no server a run of theirs would not start.
func TestSandboxCheckForRows(t *testing.T) {
	t.Setenv("LOCKBENCH_ETCD_BIN", t.TempDir()+"/no-etcd")
	code, stdout, stderr := run("sandbox", "--check", "--impl", "redis,zk-pred,redlock")
	var kinds []string
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		f := strings.Fields(l)
		kinds = append(kinds, strings.TrimSuffix(f[1], ":"))
	}
	if strings.Join(kinds, " ") != "redis zookeeper" {
		t.Errorf("exit %d, kinds %v (stderr %q); want redis and zookeeper only", code, kinds, stderr)
	}
	// etcd is missing (above), but these rows do not need it.
	if code != ExitOK {
		t.Errorf("exit %d, want 0: no kind these rows need is missing", code)
	}
	code, stdout, _ = run("sandbox", "--check", "--impl", "etcd")
	if code != ExitFailure || !strings.HasPrefix(stdout, "missing etcd: ") {
		t.Errorf("--impl etcd: exit %d, stdout %q; want etcd named missing", code, stdout)
	}
	for _, args := range [][]string{{"sandbox", "--check", "--impl", "nope"}, {"sandbox", "--impl", "redis"}} {
		if code, _, _ := run(args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// lineWriter hands each line written to it to a channel.
type lineWriter struct{ lines chan string }

func (w lineWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.lines <- l
	}
	return len(p), nil
}

// sandbox --servers starts its servers in the profile asked: Redis keeps
// its snapshot rules in production and none when fast.
func TestSandboxServersProfileReachesTheServers(t *testing.T) {
	for _, tc := range []struct{ profile, save string }{{"fast", ""}, {"production", "3600 1 300 100 60 10000"}} {
		t.Run(tc.profile, func(t *testing.T) {
			args := []string{"--servers", tc.profile, "--redis", "1"}
			for _, k := range sandbox.Kinds() {
				if k.Flag != "redis" {
					args = append(args, "--"+k.Flag, "0")
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out := lineWriter{make(chan string, 64)}
			done := make(chan error, 1)
			go func() { done <- sandboxCmd(ctx, args, out, io.Discard) }()
			var addr string
			for addr == "" {
				select {
				case l := <-out.lines:
					if f := strings.Fields(l); len(f) == 3 && f[0] == "#" && f[1] == "redis" {
						addr = f[2]
					}
				case err := <-done:
					t.Fatalf("sandbox ended before printing a redis address: %v", err)
				}
			}
			rdb := redis.NewClient(&redis.Options{Addr: addr})
			defer rdb.Close()
			got, err := rdb.ConfigGet(ctx, "save").Result()
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			if got["save"] != tc.save {
				t.Errorf("--servers %s: redis save %q, want %q", tc.profile, got["save"], tc.save)
			}
			<-done
		})
	}
}

// Naming a kind starts only the kinds named: scripts/redis-baseline's
// sandbox --redis 1 --zk 0 started every other kind beside its Redis
// (etcd, a kube-apiserver …), idle but sharing the CPU it measured.
func TestSandboxSpecStartsTheKindsNamed(t *testing.T) {
	defaults := map[string]int{}
	for _, k := range sandbox.Kinds() {
		defaults[k.Name] = 1
	}
	named := func(flags ...string) func(string) bool {
		return func(f string) bool { return slices.Contains(flags, f) }
	}
	spec, err := sandboxSpec(defaults, named("redis", "zk"))
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range spec {
		if want := map[string]int{"redis": 1, "zookeeper": 1}[k]; n != want {
			t.Errorf("sandbox --redis 1 --zk 1 starts %d %s, want %d", n, k, want)
		}
	}
	spec, err = sandboxSpec(defaults, named())
	if err != nil {
		t.Fatal(err)
	}
	if len(spec) != len(sandbox.Kinds()) {
		t.Errorf("naming no kind starts %v, want every kind", spec)
	}
	for k, n := range spec {
		if n != 1 {
			t.Errorf("naming no kind starts %d %s, want its default", n, k)
		}
	}
	defaults["zookeeper"] = 2
	if _, err := sandboxSpec(defaults, named("zk")); err == nil {
		t.Error("a ZooKeeper ensemble of 2 accepted")
	}
}
