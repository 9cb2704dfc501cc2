package sandbox

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// A process's CPU time from its threads' schedstat agrees with the 10 ms
// ticks of /proc/PID/stat and is finer than them: this test's own
// process, spinning, read both ways.
func TestSchedstatAgreesWithTicks(t *testing.T) {
	pid := os.Getpid()
	// Spin until the ticks show some CPU time: bounded, and however
	// loaded the machine is.
	var ticks time.Duration
	for end := time.Now().Add(20 * time.Second); ticks < 200*time.Millisecond && time.Now().Before(end); {
		var ok bool
		if ticks, ok = statCPU(pid); !ok {
			t.Fatal("/proc/self/stat unreadable")
		}
	}
	ns, ok := schedstatCPU(pid)
	if !ok {
		t.Fatal("schedstat unreadable")
	}
	// Both count every thread; ticks are read first and round down.
	if d := ns - ticks; d < -20*time.Millisecond || d > 100*time.Millisecond {
		t.Errorf("schedstat %v, ticks %v: apart by %v", ns, ticks, d)
	}
	if ns%(10*time.Millisecond) == 0 && ticks%(10*time.Millisecond) == 0 && ns == ticks {
		t.Errorf("schedstat %v reads in whole ticks", ns)
	}
}

// A child's CPU time counts as its parent's: PostgreSQL works in the
// backends it forks. A spinning child of this test process shows in
// procCPU of this process beyond this process's own.
func TestProcCPUCountsChildren(t *testing.T) {
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sh to spin: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if !slices.Contains(descendants(os.Getpid()), cmd.Process.Pid) {
		t.Fatalf("descendants of %d lack the child %d", os.Getpid(), cmd.Process.Pid)
	}
	var child time.Duration
	for end := time.Now().Add(20 * time.Second); child < 100*time.Millisecond && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		child, _ = schedstatCPU(cmd.Process.Pid)
	}
	own, _ := schedstatCPU(os.Getpid())
	all, ok := procCPU(os.Getpid())
	if !ok || all < own+child {
		t.Errorf("procCPU %v, want at least own %v + child %v", all, own, child)
	}
}
