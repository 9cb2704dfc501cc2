//go:build !linux

package docs

import "os/exec"

// interruptOnParentDeath does nothing where the kernel has no parent-death
// signal: the test's cleanup is all there is.
func interruptOnParentDeath(*exec.Cmd) {}
