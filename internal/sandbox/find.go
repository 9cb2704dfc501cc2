package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// DatabaseConnections is how many connections a sandboxed PostgreSQL or
// MariaDB accepts: a client per connection up to the largest plans
// lockbench runs on one machine, plus the harness's own.
const DatabaseConnections = 2000

// FindBuilt finds a server lockbench builds from a module of its own (see
// scripts/install-servers): the path $env names (and only it, when set),
// ~/.cache/lockbench/bin/NAME where the install step builds it, or NAME on
// PATH if onPath takes it (nil: any). missing is the error when none is.
func FindBuilt(env, name string, onPath func(string) bool, missing error) (string, error) {
	if p := os.Getenv(env); p != "" {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		return "", missing
	}
	if h, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(h, ".cache", "lockbench", "bin", name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil && (onPath == nil || onPath(p)) {
		return p, nil
	}
	return "", missing
}

// LastLines returns the last n lines of s, for error messages.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}
