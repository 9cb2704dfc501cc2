package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Plans that cannot mean anything are refused in one line, exit 2, before
// a server starts or a file is written: a start already gone, a zero or
// negative meeting bound, too few clients for abandon, an acquire timeout
// where the scenario cannot have one, --renew where no lock can renew.
func TestPlansRefusedBeforeAnythingStarts(t *testing.T) {
	t.Setenv("LOCKBENCH_REDIS", "")
	t.Setenv("JOB_COMPLETION_INDEX", "")
	shard := []string{"run", "--shard", "0/2", "--redis", "127.0.0.1:1"}
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"start-at past":       {append(shard, "--start-at", past), "in the past"},
		"shard-wait zero":     {append(shard, "--shard-wait", "0s"), "--shard-wait must be a positive duration, got 0s"},
		"shard-wait negative": {append(shard, "--shard-wait", "-1s"), "--shard-wait must be a positive duration, got -1s"},
		"abandon 1 client":    {[]string{"run", "--impl", "zk-pred", "--scenario", "abandon", "--clients", "1"}, "needs at least 3 clients, got --clients 1"},
		"abandon 2 clients":   {[]string{"run", "--impl", "zk-pred", "--scenario", "abandon", "--clients", "8,2"}, "needs at least 3 clients, got --clients 2"},
		"negative timeout":    {[]string{"run", "--acquire-timeout", "-5ms"}, "--acquire-timeout must be a duration ≥ 0 (0 waits until the cell ends), got -5ms"},
		"burst timeout":       {[]string{"run", "--scenario", "burst", "--acquire-timeout", "10ms"}, "--acquire-timeout 10ms cannot apply to scenario burst"},
		"abandon timeout":     {[]string{"run", "--impl", "zk-pred", "--scenario", "abandon", "--clients", "4", "--acquire-timeout", "10ms"}, "cannot apply to scenario abandon"},
		"renew, none can":     {[]string{"run", "--impl", "zk-pred,etcd", "--renew"}, "no cell of the plan applies: --renew: zk-pred's leases cannot be renewed; --renew: etcd's"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := run(append(tc.args, "--out", out)...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d and one line with %q", name, code, stdout, stderr, ExitUsage, tc.want)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the refused run made its --out: %v", name, err)
		}
	}
}

// When some implementations of a plan can renew and others cannot, the
// others are skipped with one clean note each, however many client
// counts the plan has.
func TestRenewSkipsOthersWithOneNote(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandboxed Redis")
	}
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := run("run", "--impl", "redis,inproc", "--renew", "--clients", "1,2", "--duration", "200ms",
		"--warmup", "0s", "--out", out, "--quiet")
	want := "skipped inproc/hot: --renew: inproc's leases cannot be renewed\n"
	if code != ExitOK || strings.Count(stderr, "skipped") != 1 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 0 and the one note %q", code, stderr, want)
	}
}
