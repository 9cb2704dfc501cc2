package docs

import (
	"os/exec"
	"syscall"
)

// interruptOnParentDeath has the kernel send cmd SIGINT, as Ctrl-C would,
// when the test binary dies without its cleanup: killed by go test's
// timeout or by whoever stopped the run. The sandbox then stops its
// servers itself instead of running on, orphaned, with eight of them.
func interruptOnParentDeath(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGINT}
}
