package redis

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// A machine without redis-server is told which package to install.
func TestMissingBinaryNamesPackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	saved := redisCandidates
	redisCandidates = nil
	t.Cleanup(func() { redisCandidates = saved })
	f, err := sandbox.Start(context.Background(), sandbox.Spec{serverkind.Redis: 1})
	if f != nil {
		f.Close()
		t.Fatal("Start returned a fleet without redis-server")
	}
	var me *sandbox.MissingError
	if !errors.As(err, &me) || !errors.Is(err, sandbox.ErrMissing) {
		t.Fatalf("want MissingError, got %v", err)
	}
	if !strings.Contains(err.Error(), "apt-get install -y redis-server") {
		t.Fatalf("error does not name the install command: %v", err)
	}
}
