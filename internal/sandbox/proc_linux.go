package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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

// procCPU is the CPU time of the processes that serve with pid (family),
// living or exited and waited for. PostgreSQL serves each
// connection from a backend process of its own (and runs under runuser
// here when lockbench is root), so the server's process alone would leave
// most of its work uncounted — and counted as other processes' when a cell
// weighs the machine's load. A living process counts the nanoseconds each
// of its threads has run (/proc/PID/task/*/schedstat): a JVM's work is not
// on its main thread, and a burst that lasts under a second needs better
// than /proc/PID/stat's 10 ms ticks, which count only where schedstat
// cannot be read and for children that exited.
func procCPU(pid int) (time.Duration, bool) {
	pids, ok := family(pid)
	if !ok {
		return 0, false
	}
	return cpuOf(pids)
}

// cpuOf is the CPU time of pids (see procCPU); false when none is left.
func cpuOf(pids []int) (time.Duration, bool) {
	var total time.Duration
	n := 0
	for _, pid := range pids {
		p, ok := readStat(fmt.Sprintf("/proc/%d/stat", pid))
		if !ok {
			continue // ended since it was found
		}
		n++
		total += ownCPU(p) + ticksToDuration(p.reaped)
	}
	return total, n > 0
}

// ownCPU is a process's own CPU time: its living threads' nanoseconds,
// or its ticks where those cannot be read. A thread that ends between two
// readings takes its time out of this sum; cpuMemo, which a server's
// readings go through, keeps it in. Filling the gap from the process's
// ticks instead made every reading ±10 ms noisy, since a process's ticks
// and its threads' are rounded apart.
func ownCPU(p proc) time.Duration {
	if ns, ok := threadsCPU(p.pid); ok {
		return ns
	}
	return ticksToDuration(p.own)
}

func ticksToDuration(t int64) time.Duration { return time.Duration(t) * time.Second / clockTicks }

// proc is a process's line of /proc/PID/stat: its parent and process
// group, its own CPU ticks and those of its exited children it waited for.
type proc struct {
	pid, ppid, pgrp int
	own, reaped     int64
}

// processTree is the processes that serve with pid (family); false when
// pid is gone.
func processTree(pid int) ([]proc, bool) {
	all := allProcs()
	pids, ok := family(pid)
	if !ok {
		return nil, false
	}
	out := make([]proc, 0, len(pids))
	for _, p := range pids {
		out = append(out, all[p])
	}
	return out, true
}

// threadsCPU is the nanoseconds pid's living threads have run: the first
// field of each one's schedstat, summed.
func threadsCPU(pid int) (time.Duration, bool) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	var ns time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // a thread that ended between the listing and the read
		}
		f := strings.Fields(string(b))
		if len(f) < 1 {
			return 0, false
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		ns += time.Duration(n)
	}
	return ns, true
}

// readStat reads a /proc/PID/stat file.
func readStat(path string) (proc, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return proc{}, false
	}
	return parseStat(b)
}

func parseStat(b []byte) (proc, bool) {
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')'. ppid is field 4, pgrp 5; utime, stime, cutime and cstime
	// are 14 to 17.
	i := bytes.LastIndexByte(b, ')')
	j := bytes.IndexByte(b, ' ')
	if i < 0 || j < 0 || j > i {
		return proc{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return proc{}, false
	}
	var p proc
	var err error
	if p.pid, err = strconv.Atoi(string(b[:j])); err != nil {
		return proc{}, false
	}
	if p.ppid, err = strconv.Atoi(f[1]); err != nil {
		return proc{}, false
	}
	if p.pgrp, err = strconv.Atoi(f[2]); err != nil {
		return proc{}, false
	}
	var t [4]int64
	for k, v := range f[11:15] {
		if t[k], err = strconv.ParseInt(v, 10, 64); err != nil {
			return proc{}, false
		}
	}
	p.own, p.reaped = t[0]+t[1], t[2]+t[3]
	return p, true
}

// InUse reports whether a process has dir as its working directory.
func InUse(dir string) bool {
	cwds, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, c := range cwds {
		if d, err := os.Readlink(c); err == nil && d == dir {
			return true
		}
	}
	return false
}

// cpuMemo reads one server's CPU time as procCPU does, remembering what
// each of its processes' threads had run at the last reading: a thread
// that has ended since (a connection's, or a JVM's worker) keeps that much
// in the sum instead of taking its whole time out of it, so that a cell's
// difference of two readings never loses what ran before it, and never
// goes below zero. What the thread ran between its last reading and its
// end is not seen. A process that ended is the parent's to count (its
// reaped ticks), and is forgotten here.
type cpuMemo struct {
	mu   sync.Mutex
	last map[int]map[string]time.Duration // pid → thread id → ns at the last reading
	gone map[int]time.Duration            // pid → ns of its threads that ended, as last read
}

func (m *cpuMemo) procCPU(pid int) (time.Duration, bool) {
	pids, ok := family(pid)
	if !ok {
		return 0, false
	}
	return m.cpuOf(pids)
}

// cpuOf is cpuOf (the package's) through the memo: the CPU time of pids,
// threads that ended since the last reading kept in; false when none of
// pids is left.
func (m *cpuMemo) cpuOf(pids []int) (time.Duration, bool) {
	var tree []proc
	for _, pid := range pids {
		if p, ok := readStat(fmt.Sprintf("/proc/%d/stat", pid)); ok {
			tree = append(tree, p)
		}
	}
	if len(tree) == 0 {
		return 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil {
		m.last, m.gone = map[int]map[string]time.Duration{}, map[int]time.Duration{}
	}
	seen := map[int]bool{}
	var total time.Duration
	for _, p := range tree {
		seen[p.pid] = true
		total += ticksToDuration(p.reaped)
		threads, ok := threadTimes(p.pid)
		if !ok {
			total += ticksToDuration(p.own)
			continue
		}
		for tid, ns := range m.last[p.pid] {
			if _, alive := threads[tid]; !alive {
				m.gone[p.pid] += ns
			}
		}
		m.last[p.pid] = threads
		total += m.gone[p.pid]
		for _, ns := range threads {
			total += ns
		}
	}
	for pid := range m.last {
		if !seen[pid] {
			delete(m.last, pid)
			delete(m.gone, pid)
		}
	}
	return total, true
}

// threadTimes is the nanoseconds each of pid's living threads has run, by
// thread id (schedstat's first field).
func threadTimes(pid int) (map[string]time.Duration, bool) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return nil, false
	}
	out := make(map[string]time.Duration, len(tasks))
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // a thread that ended between the listing and the read
		}
		f := strings.Fields(string(b))
		if len(f) < 1 {
			return nil, false
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return nil, false
		}
		out[t.Name()] = time.Duration(n)
	}
	return out, true
}

// fdatasync flushes fh's data, and its size, to the disk.
func fdatasync(fh *os.File) error { return syscall.Fdatasync(int(fh.Fd())) }
