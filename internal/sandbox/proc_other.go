//go:build !linux

package sandbox

import (
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

// inUse cannot be told cheaply outside Linux: nothing is taken for in use.
func inUse(string) bool { return false }
