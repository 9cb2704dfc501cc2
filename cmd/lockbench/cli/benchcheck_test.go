package cli

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchOld is a baseline as `go test -run '^$' -bench BenchmarkLock` prints
// it: two benchmarks, each with the units lockbench gates.
const benchOld = `goos: linux
goarch: amd64
pkg: github.com/lockbench/lockbench
BenchmarkLock/impl=redis/scenario=hot/clients=4-2     200  50000 ns/op  20000 acquires/s  300000 p99-ns  0 notifications/op
BenchmarkLock/impl=redis/scenario=hot/clients=4-2     200  50000 ns/op  20000 acquires/s  310000 p99-ns  0 notifications/op
BenchmarkLock/impl=zk-pred/scenario=hot/clients=4-2   200  500000 ns/op  2000 acquires/s  3000000 p99-ns  1.00 notifications/op
BenchmarkLock/impl=zk-pred/scenario=hot/clients=4-2   200  500000 ns/op  2000 acquires/s  3100000 p99-ns  1.00 notifications/op
PASS
ok  	github.com/lockbench/lockbench	12.345s
`

// benchcheckFiles writes old and new into a temporary directory and returns
// their paths.
func benchcheckFiles(t *testing.T, old, cur string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	o, n := filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt")
	if err := os.WriteFile(o, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(n, []byte(cur), 0o644); err != nil {
		t.Fatal(err)
	}
	return o, n
}

// oneStderrLine fails t unless stderr is exactly one "lockbench: " line
// containing every one of wants.
func oneStderrLine(t *testing.T, name, stderr string, wants ...string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") || !strings.HasPrefix(stderr, "lockbench: ") {
		t.Errorf("%s: stderr is not one lockbench: line: %q", name, stderr)
	}
	for _, w := range wants {
		if !strings.Contains(stderr, w) {
			t.Errorf("%s: stderr %q does not name %q", name, stderr, w)
		}
	}
}

// noisyBench is `go test -bench` output of the two benchmarks of
// benchOld over runs runs each, every figure drawn from a lognormal of
// ±10 % around benchOld's, p99 multiplied by p99Scale.
func noisyBench(r *rand.Rand, runs int, p99Scale float64) string {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: github.com/lockbench/lockbench\n")
	for _, bm := range []struct {
		name          string
		ns, acq, p99  float64
		notifications float64
	}{{"BenchmarkLock/impl=redis/scenario=hot/clients=4-2", 50000, 20000, 300000, 0},
		{"BenchmarkLock/impl=zk-pred/scenario=hot/clients=4-2", 500000, 2000, 3000000, 1}} {
		for range runs {
			noise := func() float64 { return math.Exp(0.1 * r.NormFloat64()) }
			fmt.Fprintf(&b, "%s  200  %.0f ns/op  %.0f acquires/s  %.0f p99-ns  %.2f notifications/op\n",
				bm.name, bm.ns*noise(), bm.acq*noise(), p99Scale*bm.p99*noise(), bm.notifications)
		}
	}
	b.WriteString("PASS\nok  \tgithub.com/lockbench/lockbench\t12.345s\n")
	return b.String()
}

// The baseline behaviour the fixes below must keep, on runs that differ
// as real ones do (±10 %, 6 and 4 runs a side, enough for the U-test):
// two draws of the same benchmarks pass, a doubled p99 is exit 4.
func TestBenchcheckPassesAndRegresses(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(51, 6))
	for _, runs := range []int{4, 6} {
		o, n := benchcheckFiles(t, noisyBench(r, runs, 1), noisyBench(r, runs, 1))
		if code, out, errOut := run("benchcheck", o, n); code != ExitOK || errOut != "" || !strings.Contains(out, "impl=zk-pred") {
			t.Errorf("A/A, %d noisy runs a side: exit %d, stdout %q, stderr %q", runs, code, out, errOut)
		}
		o, n = benchcheckFiles(t, noisyBench(r, runs, 1), noisyBench(r, runs, 2))
		code, out, errOut := run("benchcheck", o, n)
		if code != ExitRegressed || strings.Count(out, "REGRESSED") != 2 {
			t.Errorf("doubled p99, %d noisy runs a side: exit %d, want %d; stdout %q", runs, code, ExitRegressed, out)
		}
		oneStderrLine(t, "doubled p99", errOut, "2 metric(s) past their limit")
	}
}

// A benchmark of the baseline that the new run lacks — renamed, crashed,
// skipped for want of a server — fails the gate (exit 1) and is named.
func TestBenchcheckMissingBenchmarkFails(t *testing.T) {
	t.Parallel()
	var kept []string
	for _, l := range strings.Split(benchOld, "\n") {
		if !strings.Contains(l, "impl=zk-pred") {
			kept = append(kept, l)
		}
	}
	gone := strings.Join(kept, "\n")
	// go test prints a benchmark that called b.Skip as 0 iterations.
	skipped := strings.ReplaceAll(gone, "PASS\n",
		"BenchmarkLock/impl=zk-pred/scenario=hot/clients=4-2  0  NaN ns/op\n--- BENCH: BenchmarkLock/impl=zk-pred/scenario=hot/clients=4-2\n    bench_test.go:40: no ZooKeeper\nPASS\n")
	// The benchmark ran but stopped reporting a gated unit.
	noP99 := strings.ReplaceAll(benchOld, "3000000 p99-ns", "")
	noP99 = strings.ReplaceAll(noP99, "3100000 p99-ns", "")
	for name, tc := range map[string]struct {
		cur   string
		wants []string
	}{
		"removed":    {gone, []string{"BenchmarkLock/impl=zk-pred/scenario=hot/clients=4", "missing from", "new.txt"}},
		"skipped":    {skipped, []string{"BenchmarkLock/impl=zk-pred/scenario=hot/clients=4", "missing from", "new.txt"}},
		"unit gone":  {noP99, []string{"BenchmarkLock/impl=zk-pred/scenario=hot/clients=4 (p99-ns)", "missing from", "new.txt"}},
		"and slower": {strings.ReplaceAll(gone, "0 notifications/op", "1 notifications/op"), []string{"BenchmarkLock/impl=zk-pred/scenario=hot/clients=4", "missing from", "past their limit"}},
	} {
		o, n := benchcheckFiles(t, benchOld, tc.cur)
		code, out, errOut := run("benchcheck", o, n)
		if code != ExitFailure {
			t.Errorf("%s: exit %d, want %d; stderr %q", name, code, ExitFailure, errOut)
		}
		oneStderrLine(t, name, errOut, tc.wants...)
		if !strings.Contains(out, "MISSING") {
			t.Errorf("%s: the table does not show the missing benchmark:\n%s", name, out)
		}
	}
	// A benchmark only in the new run is not missing: it has no baseline yet.
	o, n := benchcheckFiles(t, gone, benchOld)
	if code, out, errOut := run("benchcheck", o, n); code != ExitOK || !strings.Contains(out, "new (no baseline)") {
		t.Errorf("added benchmark: exit %d, stderr %q\n%s", code, errOut, out)
	}
}

// Any FAIL that go test printed, in either input, fails the gate (exit 1)
// naming the benchmark or package.
func TestBenchcheckFailLinesFail(t *testing.T) {
	t.Parallel()
	const pkgFail = "FAIL\tgithub.com/lockbench/lockbench\t12.345s\n"
	failed := strings.ReplaceAll(benchOld, "PASS\nok  \tgithub.com/lockbench/lockbench\t12.345s\n",
		"--- FAIL: BenchmarkLock/impl=zk-pred/scenario=hot/clients=4\n    bench_test.go:61: mutual exclusion violated\n--- FAIL: BenchmarkLock\nFAIL\nexit status 1\n"+pkgFail)
	panicked := strings.ReplaceAll(benchOld, "PASS\nok  \tgithub.com/lockbench/lockbench\t12.345s\n",
		"panic: boom\n\ngoroutine 7 [running]:\nexit status 2\n"+pkgFail)
	bareFail := strings.ReplaceAll(benchOld, "PASS\n", "FAIL\n")
	buildFailed := "# github.com/lockbench/lockbench\n./bench_test.go:1:1: syntax error\nFAIL\tgithub.com/lockbench/lockbench [build failed]\nFAIL\n"
	for name, tc := range map[string]struct {
		old, cur string
		wants    []string
	}{
		"benchmark failed in new": {benchOld, failed, []string{"new.txt", "FAIL", "BenchmarkLock/impl=zk-pred/scenario=hot/clients=4", "github.com/lockbench/lockbench"}},
		"benchmark failed in old": {failed, benchOld, []string{"old.txt", "FAIL", "BenchmarkLock/impl=zk-pred/scenario=hot/clients=4"}},
		"panic":                   {benchOld, panicked, []string{"new.txt", "FAIL", "github.com/lockbench/lockbench"}},
		"bare FAIL":               {benchOld, bareFail, []string{"new.txt", "FAIL", "line 8"}},
		"build failed":            {benchOld, buildFailed, []string{"new.txt", "FAIL", "github.com/lockbench/lockbench"}},
	} {
		o, n := benchcheckFiles(t, tc.old, tc.cur)
		code, _, errOut := run("benchcheck", o, n)
		if code != ExitFailure {
			t.Errorf("%s: exit %d, want %d; stderr %q", name, code, ExitFailure, errOut)
		}
		oneStderrLine(t, name, errOut, tc.wants...)
	}
	// The nested failure is named, not only its parent.
	o, n := benchcheckFiles(t, benchOld, failed)
	if _, _, errOut := run("benchcheck", o, n); strings.Contains(errOut, "BenchmarkLock,") || strings.HasSuffix(strings.TrimSpace(errOut), "BenchmarkLock") {
		t.Errorf("the parent benchmark is named beside its failed sub-benchmark: %q", errOut)
	}
}

// A --limit that cannot gate anything is the caller's mistake: exit 2,
// naming the unit and the units the inputs have, before any table.
func TestBenchcheckUnknownLimitIsUsage(t *testing.T) {
	t.Parallel()
	o, n := benchcheckFiles(t, benchOld, benchOld)
	for name, tc := range map[string]struct {
		args  []string
		wants []string
	}{
		"unknown unit":       {[]string{"--limit", "p99=10%"}, []string{`"p99"`, "p99-ns", "acquires/s", "notifications/op", "ns/op"}},
		"unit with a space":  {[]string{"--limit", "p99-ns =10%"}, []string{`"p99-ns "`, "p99-ns"}},
		"one of two unknown": {[]string{"--limit", "p99-ns=10%", "--limit", "p95-ns=10%"}, []string{`"p95-ns"`, "p99-ns"}},
		"NaN":                {[]string{"--limit", "p99-ns=NaN"}, []string{"NaN"}},
		"Inf":                {[]string{"--limit", "p99-ns=Inf%"}, []string{"Inf"}},
		"no unit":            {[]string{"--limit", "=10%"}, []string{"=10%"}},
		"no value":           {[]string{"--limit", "p99-ns"}, []string{"p99-ns"}},
		"double percent":     {[]string{"--limit", "p99-ns=10%%"}, []string{"10%"}},
	} {
		code, out, errOut := run(append([]string{"benchcheck", o, n}, tc.args...)...)
		if code != ExitUsage {
			t.Errorf("%s: exit %d, want %d; stderr %q", name, code, ExitUsage, errOut)
		}
		oneStderrLine(t, name, errOut, tc.wants...)
		if out != "" {
			t.Errorf("%s: wrote to stdout: %q", name, out)
		}
	}
	// The default limits must gate something too: on output with neither
	// p99-ns nor notifications/op they would pass anything.
	harness := "BenchmarkHarness-2  1000000  120 ns/op  0 B/op  0 allocs/op\n"
	o, n = benchcheckFiles(t, harness, harness)
	code, out, errOut := run("benchcheck", o, n)
	if code != ExitUsage || out != "" {
		t.Errorf("default limits on harness output: exit %d, want %d; stdout %q", code, ExitUsage, out)
	}
	oneStderrLine(t, "default limits", errOut, "p99-ns", "allocs/op", "ns/op", "--limit")
	if code, _, errOut := run("benchcheck", o, n, "--limit", "ns/op=10%"); code != ExitOK {
		t.Errorf("--limit ns/op on harness output: exit %d, stderr %q", code, errOut)
	}
}
