package sandbox

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	// pid (comm) state ppid … utime stime cutime cstime …; the name may
	// hold spaces and parentheses.
	line := "4242 (postgres: a (b) c) S 17 4242 4242 0 -1 4194560 1 0 0 0 30 12 5 3 20 0 1 0 100 0 0\n"
	pid, ppid, ticks, ok := parseStat([]byte(line))
	if !ok || pid != 4242 || ppid != 17 || ticks != 50 {
		t.Errorf("parseStat = %d, %d, %d, %v; want 4242, 17, 50, true", pid, ppid, ticks, ok)
	}
	for _, bad := range []string{"", "4242 (x", "x (y) S 1 2", "4242 (y) S z 1 1 0 -1 1 1 0 0 0 1 1 1 1"} {
		if _, _, _, ok := parseStat([]byte(bad)); ok {
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
	time.Sleep(500 * time.Millisecond)
	after, _ := procCPU(sh.Process.Pid)
	// The parent sleeps in wait; all the CPU is its child's. Even on a
	// busy machine a spinning child gets a tenth of a core.
	if d := after - before; d < 50*time.Millisecond {
		t.Errorf("the tree used %v in 500ms; its spinning child was not counted", d)
	}
	if _, ok := procCPU(os.Getpid() + 1<<22); ok {
		t.Error("a process that does not exist has a CPU time")
	}
}
