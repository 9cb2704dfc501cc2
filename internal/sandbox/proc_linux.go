package sandbox

import "syscall"

// sysProcAttr puts the server in its own process group, so a terminal's
// Ctrl-C reaches lockbench alone and lockbench decides the shutdown order,
// and asks the kernel to SIGKILL it if lockbench dies without cleaning up.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(pid int, sig syscall.Signal) { syscall.Kill(-pid, sig) }

// alive reports whether a process with pid exists.
func alive(pid int) bool { return syscall.Kill(pid, 0) != syscall.ESRCH }
