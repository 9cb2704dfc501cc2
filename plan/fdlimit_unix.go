//go:build unix

package plan

import "syscall"

// fdLimit is the number of files this process may open, 0 if unknown.
// (Go raises the soft limit to the hard one at start.)
func fdLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	return int(min(l.Cur, 1<<30))
}
