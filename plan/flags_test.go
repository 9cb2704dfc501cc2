package plan

import (
	"github.com/lockbench/lockbench/engine"
	"strings"
	"testing"
)

// --rate takes 500 or 500/s.
func TestRatesAsPeopleWriteThem(t *testing.T) {
	for _, in := range []string{"500", "500/s", " 500/s "} {
		if r, err := parseRate(in); err != nil || r != 500 {
			t.Errorf("--rate %q = %v, %v; want 500", in, r, err)
		}
	}
	if _, err := parseRate("fast"); err == nil {
		t.Error("--rate fast was accepted")
	}
}

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
		s, err := ParseShard(tc.arg, env(tc.env))
		switch {
		case tc.bad != "":
			if err == nil || !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), engine.ErrUsage.Error()) {
				t.Errorf("--shard %s (env %q): %v, want a usage error saying %q", tc.arg, tc.env, err, tc.bad)
			}
		case err != nil || s.Index != tc.i || s.Count != tc.n:
			t.Errorf("--shard %s (env %q): %+v, %v; want %d/%d", tc.arg, tc.env, s, err, tc.i, tc.n)
		}
	}
}
