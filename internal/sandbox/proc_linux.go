package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sysProcAttr puts the server in its own process group, so a terminal's
// Ctrl-C reaches lockbench alone and lockbench decides the shutdown order,
// and asks the kernel to SIGKILL it if lockbench dies without cleaning up.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(pid int, sig syscall.Signal) { syscall.Kill(-pid, sig) }

// alive reports whether a process with pid exists.
func alive(pid int) bool { return syscall.Kill(pid, 0) != syscall.ESRCH }

// clockTicks is the kernel's USER_HZ, in which /proc/PID/stat reports CPU
// time: 100 on every Linux architecture Go runs on.
const clockTicks = 100

// procCPU reads a server's CPU time from the kernel: the nanoseconds each
// of its threads has run (/proc/PID/task/*/schedstat), summed — a JVM's
// work is not on its main thread, and a burst that lasts under a second
// needs better than /proc/PID/stat's 10 ms ticks — or, where schedstat
// cannot be read, those ticks.
//
// A server that forks a process per connection (PostgreSQL's backends)
// does its work in its children: their CPU time counts as the server's.
func procCPU(pid int) (time.Duration, bool) {
	total, ok := time.Duration(0), false
	for _, p := range append([]int{pid}, descendants(pid)...) {
		d, got := schedstatCPU(p)
		if !got {
			d, got = statCPU(p)
		}
		if got {
			total, ok = total+d, true
		} else if p == pid {
			return 0, false
		}
	}
	return total, ok
}

// descendants lists the processes below pid, read from every process's
// parent in /proc.
func descendants(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	children := map[int][]int{}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		fs := strings.Fields(string(b[i+1:]))
		if len(fs) < 2 {
			continue
		}
		ppid, err1 := strconv.Atoi(fs[1])
		me, err2 := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if err1 == nil && err2 == nil {
			children[ppid] = append(children[ppid], me)
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// schedstatCPU sums the first field of every thread's schedstat: its time
// on a CPU, in nanoseconds.
func schedstatCPU(pid int) (time.Duration, bool) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // a thread that ended between the listing and the read
		}
		f := strings.Fields(string(b))
		if len(f) < 1 {
			return 0, false
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		sum += ns
	}
	return time.Duration(sum), true
}

// statCPU reads a process's user and system CPU time from /proc/PID/stat,
// in clock ticks.
func statCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')'. utime and stime are fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+st) * time.Second / clockTicks, true
}

// inUse reports whether a process has dir as its working directory.
func inUse(dir string) bool {
	cwds, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, c := range cwds {
		if d, err := os.Readlink(c); err == nil && d == dir {
			return true
		}
	}
	return false
}
