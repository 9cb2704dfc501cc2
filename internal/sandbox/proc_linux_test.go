package sandbox

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	// pid (comm) state ppid … utime stime cutime cstime …; the name may
	// hold spaces and parentheses.
	line := "4242 (postgres: a (b) c) S 17 4242 4242 0 -1 4194560 1 0 0 0 30 12 5 3 20 0 1 0 100 0 0\n"
	p, ok := parseStat([]byte(line))
	if !ok || p.pid != 4242 || p.ppid != 17 || p.own != 42 || p.reaped != 8 {
		t.Errorf("parseStat = %+v, %v; want pid 4242, ppid 17, 42 own ticks, 8 reaped", p, ok)
	}
	for _, bad := range []string{"", "4242 (x", "x (y) S 1 2", "4242 (y) S z 1 1 0 -1 1 1 0 0 0 1 1 1 1"} {
		if _, ok := parseStat([]byte(bad)); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// A server that serves from child processes, as PostgreSQL does, is
// charged their CPU: a shell whose child spins.
func TestProcCPUCountsChildren(t *testing.T) {
	sh := exec.Command("sh", "-c", "sh -c 'while :; do :; done' & wait")
	sh.SysProcAttr = sysProcAttr()
	if err := sh.Start(); err != nil {
		t.Skip("no sh:", err)
	}
	defer func() { killGroup(sh.Process.Pid, 9); sh.Wait() }()
	before, ok := procCPU(sh.Process.Pid)
	if !ok {
		t.Fatal("no CPU time for a running process")
	}
	for end := time.Now().Add(10 * time.Second); len(descendants(sh.Process.Pid)) == 0 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if len(descendants(sh.Process.Pid)) == 0 {
		t.Fatal("the shell's child never appeared")
	}
	// Wait, however busy the machine, until the child has spun 100 ms;
	// the parent sleeps in wait, so that is the tree's work.
	child := descendants(sh.Process.Pid)[0]
	var spun time.Duration
	for end := time.Now().Add(20 * time.Second); spun < 100*time.Millisecond && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		spun, _ = threadsCPU(child)
	}
	after, _ := procCPU(sh.Process.Pid)
	if after < spun || after <= before {
		t.Errorf("the tree used %v (from %v) while its child spun %v: the child was not counted", after, before, spun)
	}
	if _, ok := procCPU(os.Getpid() + 1<<22); ok {
		t.Error("a process that does not exist has a CPU time")
	}
	if !slices.Contains(descendants(os.Getpid()), sh.Process.Pid) {
		t.Errorf("descendants of %d lack its child %d", os.Getpid(), sh.Process.Pid)
	}
}

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
	ns, ok := threadsCPU(pid)
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
