package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A real go test -json run of a package with a passing, a skipped and a
// failing test reads as the failure's output, one SKIP line with its
// reason, go test's closing lines, and a failed summary.
func TestSummariseARealRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/p\n\ngo 1.22\n")
	write("p_test.go", `package p

import "testing"

func TestPasses(t *testing.T) { t.Log("quiet") }
func TestSkips(t *testing.T)  { t.Skip("no server here") }
func TestFails(t *testing.T)  { t.Error("seven, want eight") }
`)
	if err := os.Mkdir(filepath.Join(dir, "q"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("q/q.go", "package q\n") // no tests: go test's "?" line, not a SKIP
	cmd := exec.Command("go", "test", "-json", "-count=1", "./...")
	cmd.Dir = dir
	raw, _ := cmd.Output() // exit 1: a test failed
	var out strings.Builder
	failed, err := summarise(strings.NewReader(string(raw)), &out)
	got := out.String()
	if err != nil || !failed {
		t.Fatalf("summarise = %v, %v; want failed:\n%s", failed, err, got)
	}
	for _, want := range []string{
		"SKIP example.com/p TestSkips: no server here\n",
		"seven, want eight",
		"FAIL\texample.com/p\t",
		"testsummary: 1 tests skipped",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "SKIP example.com/p/q") || !strings.Contains(got, "example.com/p/q\t[no test files]") {
		t.Errorf("a package without tests should show as go test prints it, not as a skip:\n%s", got)
	}
	body, slowest, _ := strings.Cut(got, "testsummary: the 2 slowest tests")
	if strings.Contains(got, "quiet") || strings.Contains(body, "TestPasses") {
		t.Errorf("summary shows a passing test's output:\n%s", got)
	}
	// The slowest tests close it, the skipped one not among them.
	if !strings.Contains(slowest, " example.com/p TestPasses\n") || !strings.Contains(slowest, " example.com/p TestFails\n") ||
		strings.Contains(slowest, "TestSkips") {
		t.Errorf("no list of the slowest tests passed or failed:\n%s", got)
	}
}
