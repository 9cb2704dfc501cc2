package main

import (
	"fmt"
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
	failed, err := summarise(strings.NewReader(string(raw)), &out, false)
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

// skipRun is go test -json of one package whose tests skip for the given
// reasons, one test each.
func skipRun(pkg string, reasons ...string) string {
	var b strings.Builder
	for i, r := range reasons {
		test := "TestS" + string(rune('a'+i))
		fmt.Fprintf(&b, `{"Action":"run","Package":%q,"Test":%q}`+"\n", pkg, test)
		fmt.Fprintf(&b, `{"Action":"output","Package":%q,"Test":%q,"Output":"    x_test.go:9: %s\n"}`+"\n", pkg, test, r)
		fmt.Fprintf(&b, `{"Action":"skip","Package":%q,"Test":%q}`+"\n", pkg, test)
	}
	return b.String()
}

// With CI set, a skip on the allowed list passes and any other fails the
// run, naming the list; without CI, skips only count.
func TestSkipsWithCI(t *testing.T) {
	pkg := "github.com/lockbench/lockbench/impl/redisfair"
	for _, tc := range []struct {
		name   string
		ci     bool
		reason string
		fail   bool
	}{
		{"measurement, CI", true, "set LOCKBENCH_MEASURE=1 to measure", false},
		{"capability, CI", true, "redis-fair declares no fencing tokens", false},
		{"missing server, CI", true, "sandboxtest: redis-server not installed", true},
		{"one core, CI", true, "one core: nothing to leave the servers", true},
		{"missing server, no CI", false, "sandboxtest: redis-server not installed", false},
	} {
		var out strings.Builder
		failed, err := summarise(strings.NewReader(skipRun(pkg, tc.reason)), &out, tc.ci)
		if err != nil || failed != tc.fail {
			t.Errorf("%s: failed=%v (%v), want %v:\n%s", tc.name, failed, err, tc.fail, out.String())
		}
		if tc.fail && !strings.Contains(out.String(), "not on the allowed list") {
			t.Errorf("%s: the failure does not name the list:\n%s", tc.name, out.String())
		}
	}
	// The etcd row's named library behaviours are allowed for that row's
	// tests only.
	etcd := "github.com/lockbench/lockbench/impl/etcdmutex TestLibraryConformance/abandoned-grant"
	if !allowedSkip(etcd, "the library's behaviour") || allowedSkip("github.com/lockbench/lockbench/impl/zk TestConformance/abandoned-grant", "the library's behaviour") {
		t.Error("the etcd row's library skips are not allowed for it alone")
	}
}
