package cli

import (
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/sandboxtest"

	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = Main(args, &o, &e)
	return code, o.String(), e.String()
}

func TestUsageErrorsAreOneLineExit2(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"unknown impl":         {"run", "--impl", "nope"},
		"malformed list":       {"run", "--clients", "1,x"},
		"zero clients":         {"run", "--clients", "0"},
		"negative duration":    {"run", "--duration", "-1s"},
		"zero duration":        {"run", "--duration", "0s"},
		"duration & acquires":  {"run", "--duration", "2s", "--acquires", "5"},
		"unknown flag":         {"run", "--bogus"},
		"sandbox profile":      {"sandbox", "--servers", "slow"},
		"unknown scenario":     {"run", "--scenario", "storm"},
		"bad hold":             {"run", "--hold", "gauss:1ms"},
		"rate without rate":    {"run", "--scenario", "rate"},
		"even redlock":         {"run", "--redlock", "a:1,b:2"},
		"address without port": {"run", "--redis", "localhost"},
		"unknown command":      {"frobnicate"},
		"stray argument":       {"list", "extra"},
		"benchcheck one file":  {"benchcheck", "a.txt"},
		"zipf NaN":             {"run", "--scenario", "keys", "--dist", "zipf:NaN"},
		"zipf Inf":             {"run", "--scenario", "keys", "--dist", "zipf:Inf"},
		"hot NaN":              {"run", "--scenario", "keys", "--dist", "hot:NaN/0.5"},
		"uniform huge":         {"run", "--hold", "uniform:0s-2562047h"},
		"exp huge":             {"run", "--think", "exp:100000h"},
		"rate Inf":             {"run", "--scenario", "rate", "--rate", "Inf"},
		"rate NaN":             {"run", "--scenario", "rate", "--rate", "NaN"},
		"jitter NaN":           {"run", "--jitter", "NaN"},
		"jitter negative":      {"run", "--jitter", "-0.5"},
		"clients hole":         {"run", "--clients", "4,,8"},
		"clients twice":        {"run", "--clients", "4,4"},
		"impl twice":           {"run", "--impl", "redis,redis"},
		"scenario twice":       {"run", "--scenario", "hot,hot"},
		"locks zero":           {"run", "--locks", "0"},
		"max-cell-time zero":   {"run", "--max-cell-time", "0s"},
		"ensemble of two":      {"run", "--impl", "zk-pred", "--zk-ensemble", "2"},
		"bad driver option":    {"run", "--impl", "redlock", "--redlock-mode", "chaotic"},
		"timeout above ttl":    {"run", "--impl", "redlock", "--redlock-timeout", "20s"},
		"noise NaN":            {"compare", "a", "b", "--noise", "NaN"},
	}
	for name, args := range cases {
		code, out, errOut := run(args...)
		if code != ExitUsage {
			t.Errorf("%s: exit %d, want %d (stderr %q)", name, code, ExitUsage, errOut)
		}
		if lines := strings.Count(strings.TrimRight(errOut, "\n"), "\n"); lines != 0 || !strings.HasPrefix(errOut, "lockbench: ") {
			t.Errorf("%s: stderr is not one line: %q", name, errOut)
		}
		if out != "" {
			t.Errorf("%s: wrote to stdout: %q", name, out)
		}
	}
}

func TestListAndVersion(t *testing.T) {
	t.Parallel()
	code, out, _ := run("list")
	for _, want := range []string{"redis", "redlock", "redsync", "zk-naive", "zk-pred", "hot", "burst", "keys", "rate"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %s", want)
		}
	}
	// Every row says what it is: a library and its version, or lockbench's
	// own recipe.
	for _, n := range impl.Names() {
		d, _ := impl.Lookup(n)
		if strings.HasPrefix(n, "test-") {
			continue
		}
		if d.Library == "" && d.Recipe == "" {
			t.Errorf("%s names neither the library it calls nor what it is a recipe of", n)
		}
		if !strings.Contains(out, " is "+d.About()+"\n") {
			t.Errorf("list does not say what %s is (%s)", n, d.About())
		}
	}
	if code != 0 || strings.Contains(out, "test-") {
		t.Errorf("list: exit %d, output %q", code, out)
	}
	if code, out, _ := run("version"); code != 0 || !strings.HasPrefix(out, "lockbench ") {
		t.Errorf("version: %d %q", code, out)
	}
	// Help that was asked for is output: once, on stdout, exit 0. No
	// command at all is a usage error: usage on stderr, exit 2.
	if code, out, errOut := run("run", "--help"); code != 0 || strings.Count(out, "Usage: lockbench run") != 1 || errOut != "" {
		t.Errorf("run --help: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, out, errOut := run(); code != ExitUsage || out != "" || !strings.Contains(errOut, "Usage:") {
		t.Errorf("no arguments: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestUnreachableServerIsExit1(t *testing.T) {
	t.Parallel()
	code, _, errOut := run("run", "--impl", "redis", "--redis", "127.0.0.1:1", "--clients", "1",
		"--duration", "1s", "-q", "--out", t.TempDir())
	if code != ExitFailure || !strings.Contains(errOut, "127.0.0.1:1") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if strings.Contains(errOut, "lockbench: lockbench:") {
		t.Errorf("doubled prefix: %q", errOut)
	}
}

// A TTL shorter than the hold lets a second holder in: the run writes every
// result and then exits 3.
func TestViolationsExit3AfterWritingResults(t *testing.T) {
	sandboxtest.Require(t, serverkind.Redis)
	dir := t.TempDir()
	code, out, errOut := run("run", "--impl", "redis", "--clients", "4", "--duration", "1s", "--warmup", "0s",
		"--ttl", "20ms", "--hold", "60ms", "--retry", "5ms", "-q", "--out", dir)
	if code != ExitUnsafe {
		t.Fatalf("exit %d, want %d; stderr %q", code, ExitUnsafe, errOut)
	}
	if !strings.Contains(out, "UNSAFE") || !strings.Contains(errOut, "mutual exclusion was violated") {
		t.Errorf("the table does not flag the cell:\n%s\n%s", out, errOut)
	}
	sum, err := result.ReadSummary(filepath.Join(dir, result.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Cells) != 1 || sum.Cells[0].SafetyViolations == 0 {
		t.Fatalf("summary.json: %+v", sum.Cells)
	}
	var meta map[string]any
	b, err := os.ReadFile(filepath.Join(dir, result.MetaFile))
	if err != nil || json.Unmarshal(b, &meta) != nil {
		t.Fatalf("meta.json: %v", err)
	}
	// meta.json says what the row measured: its library and release, or
	// what it is lockbench's own code or recipe of.
	if libs, _ := meta["libraries"].(map[string]any); len(libs) != 1 || libs[sum.Cells[0].Impl] == "" {
		t.Errorf("meta.json libraries %v, want the row's", meta["libraries"])
	}
	if _, err := os.Stat(result.CellPath(dir, sum.Cells[0], result.HlogExt)); err != nil {
		t.Error(err)
	}
}
