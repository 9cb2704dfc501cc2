package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

// No run replaces another's results: the default directory is new every
// time, even twice in one second, and a named one that holds files is
// refused unless --force, which clears it.
func TestResultsAreNeverOverwritten(t *testing.T) {
	t.Chdir(t.TempDir())
	a, err := outDir("", false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := outDir("", false)
	if err != nil || a == b {
		t.Fatalf("two default directories in a row: %q and %q (%v)", a, b, err)
	}
	os.WriteFile(filepath.Join(a, "summary.json"), []byte("{}"), 0o644)
	if _, err := outDir(a, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("an --out holding files was accepted: %v", err)
	}
	if _, err := outDir(a, true); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(a); len(ents) != 0 {
		t.Errorf("--force left %d files", len(ents))
	}
	code, _, errOut := run("run", "--impl", "inproc", "--clients", "1", "--acquires", "10", "-q", "--out", "taken")
	if code != ExitOK {
		t.Fatalf("first run: exit %d %s", code, errOut)
	}
	code, _, errOut = run("run", "--impl", "inproc", "--clients", "1", "--acquires", "10", "-q", "--out", "taken")
	if code != ExitUsage || !strings.Contains(errOut, "--force") {
		t.Errorf("a second run into the same --out: exit %d, %q", code, errOut)
	}
	st, err := os.Stat(filepath.Join("taken", "summary.json"))
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("summary.json: %v, mode %v; want 0644", err, st.Mode().Perm())
	}
}

// --cpuprofile and --memprofile write profiles pprof reads, --trace an
// execution trace.
func TestProfilesOnDemand(t *testing.T) {
	dir := t.TempDir()
	cpu, mem, tr := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof"), filepath.Join(dir, "run.trace")
	code, _, errOut := run("run", "--impl", "inproc", "--clients", "2", "--acquires", "20000", "-q",
		"--out", filepath.Join(dir, "out"), "--cpuprofile", cpu, "--memprofile", mem, "--trace", tr)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, p := range []string{cpu, mem} {
		b, err := os.ReadFile(p)
		// A profile is gzipped protobuf: it starts with gzip's magic.
		if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: %d bytes, %v; want a gzipped profile", filepath.Base(p), len(b), err)
		}
	}
	// A trace starts with its header, "go 1.N trace", and holds more.
	if b, err := os.ReadFile(tr); err != nil || !regexp.MustCompile(`^go 1\.\d+ trace\x00`).Match(b) || len(b) < 1000 {
		t.Errorf("trace: %d bytes, %v; want an execution trace", len(b), err)
	}
	if code, _, errOut := run("run", "--impl", "inproc", "--acquires", "10", "-q", "--out", filepath.Join(dir, "out2"),
		"--trace", filepath.Join(dir, "no", "such", "dir", "t")); code != ExitFailure || !strings.Contains(errOut, "--trace") {
		t.Errorf("--trace into a missing directory: exit %d, %q; want exit %d naming --trace", code, errOut, ExitFailure)
	}
}

// --force clears a results directory, never anything else.
func TestForceClearsOnlyResults(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "src")
	os.MkdirAll(victim, 0o755)
	os.WriteFile(filepath.Join(victim, "important.go"), []byte("package x"), 0o644)
	if _, err := outDir(victim, true); err == nil || !strings.Contains(err.Error(), "important.go") {
		t.Errorf("--force on a source directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(victim, "important.go")); err != nil {
		t.Errorf("--force deleted a file no run wrote: %v", err)
	}
}

// A sharded run's directory holds .grants files, and one killed mid-cell
// a cell's unfinished files, which --force clears as any other results
// file.
func TestForceClearsAShardsResults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shard-0")
	os.MkdirAll(dir, 0o755)
	for _, f := range []string{"meta.json", "summary.json", "redis_hot_c2.hlog", "redis_hot_c2" + result.GrantsExt,
		"redis_hot_c4.hlog" + result.PartialExt, "redis_hot_c4" + result.GrantsExt + result.PartialExt} {
		os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
	}
	// and the cells' folder of a run since results kept them in one
	os.MkdirAll(filepath.Join(dir, result.CellsDir, "redis"), 0o755)
	os.WriteFile(filepath.Join(dir, result.CellsDir, "redis", "hot_c8.hlog"), []byte("x"), 0o644)
	if _, err := outDir(dir, true); err != nil {
		t.Fatalf("--force on a shard's results: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("--force left %d files", len(ents))
	}
}

// --noise takes 5%, 5 or 0.05, all one share.
func TestSharesAsPeopleWriteThem(t *testing.T) {
	for _, in := range []string{"5%", "5", "0.05"} {
		if v, err := parseNoise(in); err != nil || v < 0.0499 || v > 0.0501 {
			t.Errorf("--noise %q = %v, %v; want 0.05", in, v, err)
		}
	}
	for _, in := range []string{"0", "100%", "NaN", "-5%", "x"} {
		if _, err := parseNoise(in); err == nil {
			t.Errorf("--noise %q was accepted", in)
		}
	}
	code, _, errOut := run("run", "--impl", "inproc", "--scenario", "rate", "--rate", "200/s", "--clients", "1",
		"--duration", "300ms", "--warmup", "0s", "-q", "--out", filepath.Join(t.TempDir(), "out"))
	if code != ExitOK {
		t.Errorf("--rate 200/s: exit %d, %s", code, errOut)
	}
}

// A run that ends before any cell measured anything (interrupted while
// its servers start, or while shards meet) leaves no empty results
// directory behind, and a directory the user made before stays.
func TestRunThatMeasuredNothingLeavesNoDirectory(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, made := range map[string]bool{"new dir": false, "user's empty dir": true} {
		out := filepath.Join(t.TempDir(), "out")
		if made {
			os.Mkdir(out, 0o755)
		}
		var o, e bytes.Buffer
		err := runCmd(ctx, []string{"--redis", "127.0.0.1:1", "--clients", "1", "--duration", "1s", "--out", out}, &o, &e)
		if err == nil {
			t.Fatalf("%s: an interrupted run succeeded", name)
		}
		ents, statErr := os.ReadDir(out)
		switch {
		case made && (statErr != nil || len(ents) > 0):
			t.Errorf("%s: after the interrupt: %v, %v; want the directory there and empty", name, ents, statErr)
		case !made && !errors.Is(statErr, os.ErrNotExist):
			t.Errorf("%s: the run's own directory is left with %v", name, ents)
		}
	}
}
