package sandbox

import (
	"errors"
	"testing"

	"github.com/lockbench/lockbench/internal/serverkind"
)

// need ends the test unless every kind named is installed: a skip, or
// with CI set a failure (sandboxtest.Missing, which this package's own
// tests cannot import).
func need(t *testing.T, kinds ...string) {
	t.Helper()
	for _, k := range kinds {
		if err := Installed(k); err != nil {
			if MissingFails() {
				t.Fatalf("%v (CI is set: a missing server fails the test)", err)
			}
			t.Skip(err)
		}
	}
}

// Installed and Start agree: with $LOCKBENCH_ETCD_BIN naming nothing,
// etcd is missing for both, whatever else is on the machine.
func TestInstalledAgreesWithStart(t *testing.T) {
	t.Setenv("LOCKBENCH_ETCD_BIN", t.TempDir()+"/no-etcd")
	err := Installed(serverkind.Etcd)
	if !errors.Is(err, ErrMissing) {
		t.Fatalf("Installed(etcd) = %v, want an error wrapping ErrMissing", err)
	}
	if _, err := Start(t.Context(), Spec{serverkind.Etcd: 1}); !errors.Is(err, ErrMissing) {
		t.Fatalf("Start(etcd) = %v, want an error wrapping ErrMissing", err)
	}
}
