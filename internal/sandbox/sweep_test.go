package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// The directory of a sandbox whose lockbench was killed outright is
// removed by the next sandbox; a living one's is left alone.
func TestSweepRemovesTheDeadsDirectories(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("dead processes are told apart on Linux only")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	dead := filepath.Join(tmp, fmt.Sprintf("%s%d-123", dirPrefix, gone.Process.Pid))
	mine := filepath.Join(tmp, fmt.Sprintf("%s%d-456", dirPrefix, os.Getpid()))
	other := filepath.Join(tmp, "unrelated-dir")
	for _, d := range []string{dead, mine, other} {
		if err := os.MkdirAll(filepath.Join(d, "redis-0"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sweep()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead lockbench's directory is still there: %v", err)
	}
	for _, d := range []string{mine, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}
