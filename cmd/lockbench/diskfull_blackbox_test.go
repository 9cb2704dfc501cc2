package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// mountTiny mounts a tmpfs of size (e.g. "32k") at a new directory and
// unmounts it when the test ends. Mounting needs privileges CI may not
// grant: the test is then skipped, saying why.
func mountTiny(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a %s tmpfs to fill (needs root or CAP_SYS_ADMIN): %v: %s", size, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// A run whose --out fills up: it ends with one line saying the disk is
// full, naming the cell it could not write; every cell summary.json keeps
// has a whole interval log, no log is half written under its own name,
// and once there is room `lockbench report` renders what was kept and
// names the cells missing.
func TestRunOutOfDiskKeepsWhatItWrote(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and mounts a tmpfs")
	}
	// Each cell of the in-process lock leaves a history of up to 65,536
	// operations (2.4 MB) beside its interval log: 3 MB holds one or a
	// few of the nine cells, never all.
	mnt := mountTiny(t, "3m")
	bin := filepath.Join(t.TempDir(), "lockbench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out := filepath.Join(mnt, "run")
	clients := "1,2,4,8,16,32,64,128,256"
	b := &blackBox{t: t, bin: bin}
	code, _, stderr := b.run("run", "--impl", "inproc", "--clients", clients, "--duration", "500ms", "--warmup", "0s", "--out", out)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if code != 1 || !strings.HasPrefix(last, "lockbench: --out "+out+" is out of disk space: impl=inproc/scenario=hot/clients=") ||
		!strings.Contains(last, "no space left on device") || strings.Count(stderr, "lockbench:") != 1 {
		t.Fatalf("run on a full disk: exit %d, stderr ending %q; want 1 and one line saying the disk is full", code, last)
	}
	t.Logf("run: exit %d: %s", code, last)
	sum, err := result.ReadSummary(filepath.Join(out, result.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sum.Cells); n == 0 || n >= len(strings.Split(clients, ",")) {
		t.Fatalf("summary.json holds %d cells; want some, not all", n)
	}
	for _, c := range sum.Cells {
		if l, err := hlog.ReadCell(out, c); err != nil || l == nil || len(l.Intervals) == 0 {
			t.Errorf("%s: kept in summary.json but its log reads as %v, %v", c.Key(), l, err)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(out, "*"+result.HlogExt))
	for _, p := range logs {
		if _, err := hlog.Read(p); err != nil {
			t.Errorf("a half-written log under its own name: %v", err)
		}
	}
	if out, err := exec.Command("mount", "-o", "remount,size=64m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v: %s", err, out)
	}
	code, stdout, stderr := b.run("report", out)
	missing := result.Cell{Impl: "inproc", Scenario: "hot", Clients: 256}.Key()
	if code != 0 || !strings.HasPrefix(stdout, "PARTIAL: the run ended early") || !strings.Contains(stdout, missing) {
		t.Fatalf("report once there is room: exit %d, stdout %q, stderr %q; want 0 and a PARTIAL line naming %s", code, stdout, stderr, missing)
	}
	if html, err := os.ReadFile(filepath.Join(out, "report.html")); err != nil || !strings.Contains(string(html), "PARTIAL results") {
		t.Errorf("report.html does not say the run is partial: %v", err)
	}
	t.Logf("report: %s", strings.SplitN(stdout, "\n", 2)[0])
}
