package cli

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/plan"
)

// runFlagSeeds are the README's flag values and every value known to
// have gone wrong, per flag.
var runFlagSeeds = map[string][]string{
	"slo":      {"p99<=5ms", "errors<=0,max<=1h", "p99<=1h,errors<=NaN", "p99<=1h,acq/s>=Inf", "p99<=2562047h"},
	"ramp":     {"8:8:5s", "1:9223372036854775807:200ms", "0:1:1s", "1:1"},
	"dist":     {"zipf:1.2", "hot:0.2/0.8", "uniform:0.5", "zipf:NaN"},
	"hold":     {"5ms", "exp:1ms", "uniform:1ms-10ms", "400ms", "25h", "-1ms"},
	"think":    {"1ms", "exp:5ms", "uniform:5ms-1ms"},
	"shard":    {"0/4", "auto/4", "3/4", "4/4", "-1/4", "0/0", "0/-9223372036854775808", "/", "0/99999999999999999999"},
	"rate":     {"2000", "500/s", "NaN", "Inf", "-1", "1e300", " 5 /s"},
	"clients":  {"1,4", "1,8,32", "200", "4,,8", "0", "-1", "99999999999999999999", "9223372036854775807"},
	"impl":     {"redis,zk-pred", "inproc", "nosuch", ","},
	"scenario": {"hot", "burst", "ramp", ","},
	"start-at": {"2026-11-23T17:00:00Z", "tomorrow"},
	"locks":    {"1", "0", "-5"},
	"ttl":      {"30s", "0s", "-1s"},
}

// FuzzRunFlags gives one value to one flag of `run` and checks what
// happens before anything starts: the plan is either refused as a usage
// error in one line (exit 2), or valid — never a panic, never another
// class of error for a typo. With --shard given, --redis names the
// rendezvous so the plan can be judged without a server.
func FuzzRunFlags(f *testing.F) {
	for flag, vals := range runFlagSeeds {
		for _, v := range vals {
			f.Add(flag, v)
		}
	}
	f.Fuzz(func(t *testing.T, flag, value string) {
		if runFlagSeeds[flag] == nil {
			return // one of the flags above; the others are plain numbers and durations pflag reads
		}
		args := []string{"--" + flag, value, "--impl", "inproc", "--redis", "127.0.0.1:1"}
		if flag == "impl" {
			args = []string{"--impl", value}
		}
		if flag == "start-at" {
			args = append(args, "--shard", "0/2")
		}
		var o runOpts
		fs := runFlags(&o, io.Discard)
		err := parse(fs, args)
		if err == nil {
			var p plan.Plan
			if p, err = o.plan.Plan(fs); err == nil {
				err = p.Validate()
			}
		}
		if err == nil {
			return
		}
		if !errors.Is(err, errUsage) {
			t.Fatalf("run --%s %q: %v is not a usage error (exit 2)", flag, value, err)
		}
		if strings.TrimSpace(oneLine(err.Error())) == "" {
			t.Fatalf("run --%s %q: an empty refusal", flag, value)
		}
	})
}
