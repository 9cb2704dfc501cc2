package sandbox_test

import (
	"errors"
	"testing"

	"github.com/lockbench/lockbench/internal/serverkind"

	"github.com/lockbench/lockbench/internal/sandbox"
	_ "github.com/lockbench/lockbench/internal/sandbox/kinds"
)

// Installed and Start agree: with $LOCKBENCH_ETCD_BIN naming nothing,
// etcd is missing for both, whatever else is on the machine.
func TestInstalledAgreesWithStart(t *testing.T) {
	t.Setenv("LOCKBENCH_ETCD_BIN", t.TempDir()+"/no-etcd")
	err := sandbox.Installed(serverkind.Etcd)
	if !errors.Is(err, sandbox.ErrMissing) {
		t.Fatalf("Installed(etcd) = %v, want an error wrapping ErrMissing", err)
	}
	if _, err := sandbox.Start(t.Context(), sandbox.Spec{serverkind.Etcd: 1}); !errors.Is(err, sandbox.ErrMissing) {
		t.Fatalf("Start(etcd) = %v, want an error wrapping ErrMissing", err)
	}
}
