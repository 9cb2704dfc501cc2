package sandbox

import (
	"bytes"
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

// clockTicks is the kernel's USER_HZ, in which /proc reports CPU time: 100
// on every Linux architecture Go runs on.
const clockTicks = 100

// procCPU is the CPU time, user and system, of a process and of every
// process below it, living or exited and waited for: PostgreSQL serves
// each connection from a backend process of its own (and runs under
// runuser here when lockbench is root), so the server's process alone
// would leave most of the server's work uncounted — and counted as other
// processes' when a cell weighs the machine's load.
func procCPU(pid int) (time.Duration, bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	parent := map[int]int{}
	ticks := map[int]int64{}
	for _, path := range stats {
		p, pp, t, ok := readStat(path)
		if ok {
			parent[p], ticks[p] = pp, t
		}
	}
	if _, ok := ticks[pid]; !ok {
		return 0, false
	}
	var total int64
	for p, t := range ticks {
		for q := p; q > 1; q = parent[q] {
			if q == pid {
				total += t
				break
			}
		}
	}
	return time.Duration(total) * time.Second / clockTicks, true
}

// readStat reads a /proc/PID/stat file: the pid, its parent, and its CPU
// time with that of its exited children it waited for (utime, stime,
// cutime, cstime), in clock ticks.
func readStat(path string) (pid, ppid int, ticks int64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, 0, false
	}
	return parseStat(b)
}

func parseStat(b []byte) (pid, ppid int, ticks int64, ok bool) {
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')'. ppid is field 4; utime, stime, cutime and cstime
	// are 14 to 17.
	i := bytes.LastIndexByte(b, ')')
	j := bytes.IndexByte(b, ' ')
	if i < 0 || j < 0 || j > i {
		return 0, 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0, 0, 0, false
	}
	pid, err := strconv.Atoi(string(b[:j]))
	if err != nil {
		return 0, 0, 0, false
	}
	if ppid, err = strconv.Atoi(f[1]); err != nil {
		return 0, 0, 0, false
	}
	for _, v := range f[11:15] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, 0, 0, false
		}
		ticks += n
	}
	return pid, ppid, ticks, true
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
