package cli

import (
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "JOB_COMPLETION_INDEX" {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		arg, env string
		i, n     int
		bad      string
	}{
		{arg: "0/4", i: 0, n: 4},
		{arg: "3/4", i: 3, n: 4},
		{arg: "auto/4", env: "2", i: 2, n: 4},
		{arg: "auto/4", bad: "JOB_COMPLETION_INDEX is not set"},
		{arg: "auto/4", env: "4", bad: "from 0 to 3"},
		{arg: "auto/4", env: "x", bad: "from 0 to 3"},
		{arg: "4/4", bad: "from 0 to 3"},
		{arg: "-1/4", bad: "from 0 to 3"},
		{arg: "1/0", bad: "want I/N"},
		{arg: "1", bad: "want I/N"},
	} {
		s, err := parseShard(tc.arg, env(tc.env))
		switch {
		case tc.bad != "":
			if err == nil || !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), errUsage.Error()) {
				t.Errorf("--shard %s (env %q): %v, want a usage error saying %q", tc.arg, tc.env, err, tc.bad)
			}
		case err != nil || s.Index != tc.i || s.Count != tc.n:
			t.Errorf("--shard %s (env %q): %+v, %v; want %d/%d", tc.arg, tc.env, s, err, tc.i, tc.n)
		}
	}
}

// Sharded runs refuse, before touching anything, what they cannot run:
// a sandbox (each shard would meet servers of its own), a scenario that
// does not split, fewer clients than shards, --start-at alone.
func TestShardedRunRefusals(t *testing.T) {
	t.Setenv("LOCKBENCH_REDIS", "")
	t.Setenv("JOB_COMPLETION_INDEX", "")
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no addresses":  {[]string{"run", "--shard", "0/2"}, "a sharded run uses external servers only"},
		"auto, no env":  {[]string{"run", "--shard", "auto/2", "--redis", "127.0.0.1:1"}, "JOB_COMPLETION_INDEX is not set"},
		"rate":          {[]string{"run", "--shard", "0/2", "--redis", "127.0.0.1:1", "--scenario", "rate", "--rate", "10"}, "cannot run sharded"},
		"abandon":       {[]string{"run", "--shard", "0/2", "--redis", "127.0.0.1:1", "--scenario", "abandon", "--clients", "4"}, "cannot run sharded"},
		"few clients":   {[]string{"run", "--shard", "0/4", "--redis", "127.0.0.1:1", "--clients", "2"}, "--clients 2 cannot be split over 4 shards: each client count must be ≥ the number of shards"},
		"start-at only": {[]string{"run", "--start-at", "2026-11-23T17:00:00Z"}, "--start-at needs --shard"},
		"bad start-at":  {[]string{"run", "--shard", "0/2", "--redis", "127.0.0.1:1", "--start-at", "5pm"}, "want RFC 3339"},
		"merge no out":  {[]string{"merge", "a", "b"}, "merge needs --out DIR"},
	} {
		code, _, stderr := run(tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want %d and one line with %q", name, code, stderr, ExitUsage, tc.want)
		}
	}
}
