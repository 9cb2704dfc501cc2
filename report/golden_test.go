package report

import (
	"github.com/lockbench/lockbench/result"

	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestMarkdownGolden(t *testing.T) {
	meta := result.Meta{Version: "0.1.0-test", GoVersion: "go1.26.8", Started: fixtureStart,
		Host: map[string]string{"os": "linux", "arch": "amd64", "cpus": "2"}}
	slo := SLO{Quantile: "p99", Limit: 10 * time.Millisecond}
	golden(t, "summary.golden.md", markdown(meta, derived(fixtureCells()), &slo, nil))
}

// TestMarkdownFromRender checks that Render's summary.md is the golden one:
// what is tested is what is written.
func TestMarkdownFromRender(t *testing.T) {
	dir, _ := renderFixture(t, fixtureSummary(), true, RenderOptions{SLO: "p99=10ms"})
	got := readFile(t, filepath.Join(dir, MarkdownFile))
	want, err := os.ReadFile(filepath.Join("testdata", "summary.golden.md"))
	if err != nil {
		t.Fatal(err) // a golden file gone is a check gone
	}
	// The fixture's meta.json says lockbench 0.1.0-test too; only the
	// version line may differ, and it does not.
	if !bytes.Equal(got, want) {
		t.Errorf("rendered summary.md differs from testdata/summary.golden.md:\n%s", got)
	}
}

// The verdict's text for a run of each kind, held against a golden file:
// what a reader is told changes only on purpose.
func TestVerdictGolden(t *testing.T) {
	unsafe := fixtureCells()
	unsafe[11].SafetyViolations = 3 // zk-pred hot 4
	unsafe[12].SafetyViolations = 1 // zk-pred hot 16

	faults := []Cell{
		{Impl: "redis", Scenario: "crash", Clients: 2, Acquires: 6, AcquiresPerS: 1,
			Verdict: "redis: next holder waited 10.0s, the full TTL, after the holder died.",
			Faults:  &result.Faults{Repeats: 3, ConfiguredMs: 10000, RecoveryMs: &result.Spread{Count: 3, P50: 10004, Max: 10011}}},
		{Impl: "zk-pred", Scenario: "crash", Clients: 2, Acquires: 6, AcquiresPerS: 1,
			Faults: &result.Faults{Repeats: 3, ConfiguredMs: 4000, RecoveryMs: &result.Spread{Count: 3, P50: 4120, Max: 6015}}},
	}
	nothing := []Cell{
		{Impl: "redlock", Scenario: "hot", Clients: 8, Errors: 120, ErrorsByClass: map[string]int64{"no_quorum": 120}},
		{Impl: "redlock", Scenario: "burst", Clients: 8, Errors: 8},
	}

	var b strings.Builder
	for _, tc := range []struct {
		name  string
		cells []Cell
	}{
		{"fixture", fixtureCells()},
		{"unsafe", unsafe},
		{"faults", faults},
		{"nothing acquired", nothing},
		{"empty", nil},
	} {
		b.WriteString("## " + tc.name + "\n")
		for _, v := range Verdict(derived(tc.cells), nil) {
			b.WriteString(v.Question + ": " + v.Answer + tableText(v.Table) + "\n")
		}
		b.WriteString("\n")
	}
	golden(t, "verdict.golden.txt", []byte(b.String()))
}

func TestVerdictDeterministic(t *testing.T) {
	text := func() string {
		var b strings.Builder
		for _, v := range Verdict(derived(fixtureCells()), nil) {
			b.WriteString(v.Answer + tableText(v.Table) + "\n")
		}
		return b.String()
	}
	a := text()
	for range 20 {
		if b := text(); b != a {
			t.Fatalf("Verdict changed between calls:\n%s\n---\n%s", a, b)
		}
	}
}
