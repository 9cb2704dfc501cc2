package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// --cpuprofile and --memprofile write profiles pprof reads.
func TestProfilesOnDemand(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	code, _, errOut := run("run", "--impl", "inproc", "--clients", "2", "--acquires", "20000", "-q",
		"--out", filepath.Join(dir, "out"), "--cpuprofile", cpu, "--memprofile", mem)
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
