//go:build unix

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// RunAs makes cmd run as the system account name when lockbench runs as
// root, and leaves it alone otherwise (a user's own servers run as that
// user). The switch happens in the child before exec, so the parent-death
// signal is set after it and still holds for the server itself — a
// wrapper such as runuser would keep it for the wrapper only.
func RunAs(cmd *exec.Cmd, name string) error {
	if name == "" || os.Geteuid() != 0 {
		return nil
	}
	uid, gid, err := account(name)
	if err != nil {
		return err
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uid, Gid: gid}
	return nil
}

// account returns the ids of the system account name.
func account(name string) (uid, gid uint32, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("sandbox: the server runs as system user %s: %w", name, err)
	}
	a, err1 := strconv.ParseUint(u.Uid, 10, 32)
	b, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("sandbox: user %s has ids %s:%s", name, u.Uid, u.Gid)
	}
	return uint32(a), uint32(b), nil
}

// HandOver gives the directories a server of account name writes to that
// account, and lets it pass through their parents up to top (the
// sandbox's own directory, made private by MkdirTemp). It does nothing
// unless lockbench runs as root.
func HandOver(name, top string, dirs ...string) error {
	if name == "" || os.Geteuid() != 0 {
		return nil
	}
	uid, gid, err := account(name)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if err := os.Chown(d, int(uid), int(gid)); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		for p := filepath.Dir(d); strings.HasPrefix(p, top); p = filepath.Dir(p) {
			st, err := os.Stat(p)
			if err != nil {
				return fmt.Errorf("sandbox: %w", err)
			}
			if err := os.Chmod(p, st.Mode().Perm()|0o111); err != nil {
				return fmt.Errorf("sandbox: %w", err)
			}
			if p == top {
				break
			}
		}
	}
	return nil
}
