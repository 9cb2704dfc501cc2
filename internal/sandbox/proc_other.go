//go:build !linux

package sandbox

import (
	"os"
	"syscall"
	"time"
)

// sysProcAttr puts the server in its own process group. Outside Linux there
// is no parent-death signal: a lockbench killed with SIGKILL leaves servers.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func killGroup(pid int, sig syscall.Signal) { syscall.Kill(-pid, sig) }

// alive reports whether a process with pid exists; where that cannot be
// told cheaply, every one is taken for alive and nothing is swept.
func alive(int) bool { return true }

// procCPU cannot be read outside Linux.
func procCPU(int) (time.Duration, bool) { return 0, false }

// cpuMemo reads nothing outside Linux.
type cpuMemo struct{}

func (*cpuMemo) procCPU(int) (time.Duration, bool) { return 0, false }

func (*cpuMemo) cpuOf([]int) (time.Duration, bool) { return 0, false }

// InUse cannot be told cheaply outside Linux: nothing is taken for in use.
func InUse(string) bool { return false }

// Serving finds, outside Linux, the process of a server this lockbench
// started alone: the process group's leader (see the Linux version).
func Serving(addr string) ([]int, bool) {
	if pid, ok := pidOf(addr); ok {
		return []int{pid}, true
	}
	return nil, false
}

// listener cannot be found outside Linux.
func listener(string) (int, bool) { return 0, false }

// signalAll signals pid's process group.
func signalAll(pid int, sig syscall.Signal) { killGroup(pid, sig) }

// cpuOf cannot be read outside Linux.
func cpuOf([]int) (time.Duration, bool) { return 0, false }

// fdatasync is fsync where fdatasync is not offered.
func fdatasync(fh *os.File) error { return fh.Sync() }
