package cli

import (
	"strings"
	"testing"
)

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
