package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/suite"
)

// TestSuiteWorkloadsAreValidCommands parses every workload of every
// suite version, in every tier it runs in, over every registered row, as
// its command would: a workload whose flags a command refuses fails here,
// not an hour into a standard run.
func TestSuiteWorkloadsAreValidCommands(t *testing.T) {
	t.Parallel()
	rows := impl.Names()
	for _, v := range suite.Versions() {
		s, err := suite.Load(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, tier := range suite.Tiers() {
			ws, err := s.Select(tier, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range ws {
				if err := checkWorkload(w, suiteArgs(w, tier, rows, "", "production", true)); err != nil {
					t.Errorf("%s %s %s: %v", v, tier, w.Name, err)
				}
			}
		}
	}
	// And the check can fail: a run flag no command knows.
	w := suite.Workload{Name: "bad", Command: suite.CommandRun, Args: []string{"--clients", "0"}}
	if err := checkWorkload(w, w.Args); err == nil {
		t.Error("--clients 0 passed the workload check")
	}
}

func TestSuiteUsageErrors(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"tier":           {"suite", "--tier", "huge"},
		"version":        {"suite", "--suite", "v0"},
		"impl":           {"suite", "--impl", "nope"},
		"part":           {"suite", "--part", "2/2"},
		"empty part":     {"suite", "--impl", "inproc", "--part", "1/2"},
		"workload":       {"suite", "--workload", "capacity"}, // full only
		"profile":        {"suite", "--servers", "slow"},
		"list tier":      {"suite", "list", "--tier", "huge"},
		"stray argument": {"suite", "now"},
	} {
		code, _, stderr := run(args...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.HasPrefix(stderr, "lockbench: ") {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line", name, code, stderr)
		}
	}
}

// TestSuiteQuickOnInproc runs the quick tier over the harness's own
// lock (no server): the bundle holds suite.json naming each workload
// with its folder, and each folder is a results directory that reads back.
func TestSuiteQuickOnInproc(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "bundle")
	code, stdout, stderr := run("suite", "--impl", "inproc", "--out", dir, "--quiet")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := suite.ReadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range b.Workloads {
		names = append(names, r.Name)
		if r.Exit != 0 || r.Dir != r.Name {
			t.Errorf("workload %+v", r)
		}
		sum, err := result.ReadSummary(filepath.Join(dir, r.Dir, result.SummaryFile))
		if err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		if len(sum.Cells) == 0 {
			t.Errorf("%s: no cells", r.Name)
		}
		for _, c := range sum.Cells {
			if c.Impl != "inproc" || c.Acquires == 0 {
				t.Errorf("%s: cell %s with %d acquisitions", r.Name, c.Key(), c.Acquires)
			}
		}
	}
	if !slices.Equal(names, []string{"uncontended", "hot", "zipf-keys", "herd"}) {
		t.Errorf("workloads %v", names)
	}
	if b.Suite != suite.Current || b.Tier != suite.Quick || b.Part != "0/1" || !slices.Equal(b.Rows, []string{"inproc"}) || b.Ended.IsZero() {
		t.Errorf("bundle %+v", b)
	}
	if b.Machine.Cores == 0 || b.Machine.OS == "" {
		t.Errorf("fingerprint %+v: taken from the workloads' meta.json", b.Machine)
	}
	for _, w := range []string{"== uncontended (1 of 4)", "== herd (4 of 4)"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q", w)
		}
	}
	// A second run into the same directory is refused without --force,
	// and --force clears only a bundle.
	if code, _, _ := run("suite", "--impl", "inproc", "--out", dir); code != ExitUsage {
		t.Errorf("second run into %s: exit %d, want 2", dir, code)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644)
	if code, _, _ := run("suite", "--impl", "inproc", "--out", other, "--force"); code != ExitUsage {
		t.Errorf("--force on a directory that is no bundle: exit %d, want 2", code)
	}
}

// writeBundle writes a bundle whose hot workload measured redis at 8
// clients in six rounds around rate acq/s.
func writeBundle(t *testing.T, rate float64) string {
	t.Helper()
	dir := t.TempDir()
	rounds := []float64{rate * 0.97, rate * 0.99, rate, rate * 1.01, rate * 1.02, rate * 0.98}
	b := &suite.Bundle{Schema: suite.BundleSchema, Suite: "v1", Tier: suite.Standard, Part: "0/1", Rows: []string{"redis"},
		Workloads: []suite.Run{{Name: "hot", Command: "run", Dir: "hot"}}}
	if err := b.Write(dir); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "hot"), 0o755)
	cell := result.Cell{Impl: "redis", Scenario: "hot", Kind: result.KindClosed, Clients: 8, Acquires: 1000, AcquiresPerS: rate,
		Rounds: &result.RoundFigures{N: 6, AcquiresPerS: result.EstimateOf(rounds)}}
	if err := result.WriteJSON(filepath.Join(dir, "hot", result.SummaryFile), &result.Summary{Schema: result.SchemaVersion, Cells: []result.Cell{cell}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSuiteCompare(t *testing.T) {
	t.Parallel()
	a, same, half := writeBundle(t, 3000), writeBundle(t, 3000), writeBundle(t, 1500)
	code, stdout, stderr := run("suite", "compare", a, same)
	if code != ExitOK || !strings.Contains(stdout, "1 figures: 0 worse, 0 better, 1 ~") {
		t.Errorf("the same rounds: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = run("suite", "compare", a, half)
	if code != ExitRegressed || !strings.Contains(stdout, "worse (p=") || !strings.Contains(stdout, "0.50 [") {
		t.Errorf("half the rate: exit %d, want 4\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "yardstick: not in both bundles") {
		t.Errorf("no word on the missing yardstick:\n%s", stdout)
	}
	if code, _, _ := run("suite", "compare", a, t.TempDir()); code != ExitFailure {
		t.Errorf("a directory without suite.json: exit %d, want 1", code)
	}
	if code, _, _ := run("suite", "compare", a); code != ExitUsage {
		t.Errorf("one bundle: exit %d, want 2", code)
	}
}

// TestSuitePartsJoin runs a tier in two parts by rows and joins them: the
// joined bundle's table has both parts' rows; a part joined with itself is
// refused.
func TestSuitePartsJoin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var parts []string
	for i := range 2 {
		p := filepath.Join(dir, fmt.Sprintf("part-%d", i))
		code, stdout, stderr := run("suite", "--impl", "inproc,redis", "--workload", "uncontended", "--servers", "fast",
			"--part", fmt.Sprintf("%d/2", i), "--out", p, "--quiet")
		if code != ExitOK {
			t.Fatalf("part %d: exit %d\n%s%s", i, code, stdout, stderr)
		}
		parts = append(parts, p)
	}
	joined := filepath.Join(dir, "joined")
	if code, _, stderr := run("suite", "join", "--out", joined, parts[0], parts[1]); code != ExitOK {
		t.Fatalf("join: exit %d: %s", code, stderr)
	}
	b, err := suite.ReadBundle(joined)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.Rows, []string{"inproc", "redis"}) || b.Part != "0/2+1/2" || len(b.Workloads) != 1 || len(b.Workloads[0].Dirs) != 2 {
		t.Errorf("joined bundle %+v", b)
	}
	page, err := os.ReadFile(filepath.Join(joined, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{`locks/inproc.html`, `locks/redis.html`, `href="parts/1/uncontended/report.html"`} {
		if !strings.Contains(string(page), row) {
			t.Errorf("the joined table lacks %s", row)
		}
	}
	if code, _, stderr := run("suite", "join", "--out", filepath.Join(dir, "twice"), parts[0], parts[0]); code != ExitUsage || !strings.Contains(stderr, "both part 0/2") {
		t.Errorf("a part joined with itself: exit %d, %q; want 2", code, stderr)
	}
}
