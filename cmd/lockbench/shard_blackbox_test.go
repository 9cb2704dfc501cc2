package main

// Black-box tests of sharded runs: they build this command and drive it
// as a user does (`run --shard`, `merge`), reading back only the files it
// writes, so that they hold whatever shape the code behind them takes.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/sandboxtest"
)

// blackBox is the command built for a test and a Redis for its shards to
// meet on and lock.
type blackBox struct {
	t     *testing.T
	bin   string
	redis string
	dir   string
}

func newBlackBox(t *testing.T) *blackBox {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the command and runs shards as processes")
	}
	srv := sandboxtest.Start(t, impl.Need{Role: "redis", Kind: serverkind.Redis})
	dir := t.TempDir()
	b := &blackBox{t: t, bin: filepath.Join(dir, "lockbench"), redis: strings.Join(srv["redis"], ","), dir: dir}
	if out, err := exec.Command("go", "build", "-o", b.bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return b
}

// start starts the command; wait gives its exit code and stderr.
func (b *blackBox) start(args ...string) (cmd *exec.Cmd, wait func() (int, string)) {
	b.t.Helper()
	cmd = exec.Command(b.bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	return cmd, func() (int, string) {
		err := cmd.Wait()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			b.t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), stderr.String()
	}
}

// shardArgs are shard i's of n flags for a run of the plan in args.
func (b *blackBox) shardArgs(runID string, i, n int, wait string, args ...string) []string {
	out := filepath.Join(b.dir, fmt.Sprintf("%s-%d", runID, i))
	return append([]string{"run", "-q", "--shard", fmt.Sprintf("%d/%d", i, n), "--shard-wait", wait,
		"--run-id", runID, "--redis", b.redis, "--out", out}, args...)
}

// mergedCell reads the one cell of a merged summary.json as JSON fields.
func mergedCell(t *testing.T, dir string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct{ Cells []map[string]any }
	if err := json.Unmarshal(raw, &sum); err != nil || len(sum.Cells) != 1 {
		t.Fatalf("summary.json: %v, %d cells", err, len(sum.Cells))
	}
	return sum.Cells[0]
}

// A lock made unsafe on purpose (a TTL shorter than the hold) over two
// shards of one client each: neither shard can see a violation (one
// client cannot overlap itself), so every one merge reports is two
// shards' grants overlapping — and merge exits 3 naming the cell.
func TestMergeFindsViolationsAcrossShards(t *testing.T) {
	b := newBlackBox(t)
	plan := []string{"--impl", "redis", "--clients", "2", "--duration", "1500ms", "--warmup", "0s",
		"--ttl", "20ms", "--hold", "60ms", "--retry", "5ms"}
	var dirs []string
	var wg sync.WaitGroup
	codes, errs := make([]int, 2), make([]string, 2)
	for i := range 2 {
		args := b.shardArgs("unsafe", i, 2, "60s", plan...)
		dirs = append(dirs, args[slices.Index(args, "--out")+1])
		_, wait := b.start(args...)
		wg.Go(func() { codes[i], errs[i] = wait() })
	}
	wg.Wait()
	for i := range 2 {
		if codes[i] != 0 {
			t.Fatalf("shard %d of one client: exit %d, want 0 (a lone client cannot overlap itself): %s", i, codes[i], errs[i])
		}
	}
	out := filepath.Join(b.dir, "merged")
	_, wait := b.start(append([]string{"merge", "--out", out}, dirs...)...)
	code, stderr := wait()
	if code != 3 || !strings.Contains(stderr, "mutual exclusion was violated in impl=redis/scenario=hot/clients=2") {
		t.Fatalf("merge: exit %d, stderr %q; want 3 naming the cell", code, stderr)
	}
	c := mergedCell(t, out)
	if v, _ := c["safety_violations"].(float64); v < 1 {
		t.Errorf("merged cell has %v safety violations, want some: %v", c["safety_violations"], c)
	}
	t.Logf("merge exit %d: %s", code, strings.TrimSpace(stderr))
}

// A shard killed mid-cell leaves a directory merge refuses, naming it,
// and the shard it left behind gives up waiting with one line naming the
// one that never came. It runs beside the other killed-shard test: both
// spend most of their time in the living shard's --shard-wait, each on a
// Redis and in a directory of its own.
func TestMergeRefusesAShardKilledMidCell(t *testing.T) {
	t.Parallel()
	b := newBlackBox(t)
	plan := []string{"--impl", "redis", "--clients", "4", "--duration", "6s", "--warmup", "0s"}
	live, waitLive := b.start(b.shardArgs("killed", 0, 2, "10s", plan...)...)
	defer live.Process.Kill()
	args := b.shardArgs("killed", 1, 2, "10s", plan...)
	dying, waitDying := b.start(args...)
	dead := args[slices.Index(args, "--out")+1]
	// Kill it once it is granting: its grants file exists from the first,
	// under its unfinished name until the cell ends.
	grants := filepath.Join(dead, "cells", "redis", "hot_c4.grants.partial")
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if st, err := os.Stat(grants); err == nil && st.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("shard 1 wrote no grants to %s", grants)
		}
	}
	if err := dying.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitDying()
	code, stderr := waitLive()
	if code != 1 || !strings.Contains(stderr, "shard 1/2") {
		t.Errorf("the living shard: exit %d, stderr %q; want 1 naming shard 1/2", code, stderr)
	}
	out := filepath.Join(b.dir, "merged")
	_, wait := b.start("merge", "--out", out, filepath.Join(b.dir, "killed-0"), dead)
	code, stderr = wait()
	if code == 0 || !strings.Contains(stderr, dead) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("merge of a killed shard: exit %d, stderr %q; want a refusal in one line naming %s", code, stderr, dead)
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err == nil {
		t.Errorf("merge refused but wrote %s", filepath.Join(out, "summary.json"))
	}
	t.Logf("merge exit %d: %s", code, strings.TrimSpace(stderr))
}
