package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
)

// Initialising a database's data directory (initdb, mariadb-install-db)
// takes seconds; copying one takes a fraction of that. So each process
// initialises one data directory per kind and binary, the first time it
// starts such a server, and every server after copies it. The templates
// live beside the sandboxes, under the process's pid, so that sweep
// removes them once the process is gone.
var templates struct {
	mu   sync.Mutex
	dirs map[string]string // key → initialised data directory
}

// DataFrom fills data (which must not exist) with a copy of the template
// for key, making the template with initialise(ctx, dir) first if needed.
// user owns the template (see handOver).
func DataFrom(ctx context.Context, key, user, data string, initialise func(ctx context.Context, dir string) error) error {
	tmpl, err := template(ctx, key, user, initialise)
	if err != nil {
		return err
	}
	// cp -a keeps owners and modes: PostgreSQL wants its data directory
	// its own, mode 0700.
	if b, err := exec.CommandContext(ctx, "cp", "-a", tmpl, data).CombinedOutput(); err != nil {
		return fmt.Errorf("sandbox: copy %s: %w: %s", tmpl, err, LastLines(string(b), 2))
	}
	return nil
}

func template(ctx context.Context, key, user string, initialise func(ctx context.Context, dir string) error) (string, error) {
	templates.mu.Lock()
	defer templates.mu.Unlock()
	if d, ok := templates.dirs[key]; ok {
		if _, err := os.Stat(d); err == nil {
			return d, nil
		}
	}
	top := filepath.Join(os.TempDir(), dirPrefix+strconv.Itoa(os.Getpid())+"-templates")
	if err := os.MkdirAll(top, 0o700); err != nil {
		return "", fmt.Errorf("sandbox: %w", err)
	}
	parent, err := os.MkdirTemp(top, "t-")
	if err != nil {
		return "", fmt.Errorf("sandbox: %w", err)
	}
	dir := filepath.Join(parent, "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("sandbox: %w", err)
	}
	if err := HandOver(user, top, parent, dir); err != nil {
		return "", err
	}
	if err := initialise(ctx, dir); err != nil {
		os.RemoveAll(parent)
		return "", err
	}
	if templates.dirs == nil {
		templates.dirs = map[string]string{}
	}
	templates.dirs[key] = dir
	return dir, nil
}
