package cli

import (
	"strings"
	"testing"
)

// sandbox --check says per kind what the sandbox would find, starting
// nothing: scripts/install-servers installs what it names missing, so
// the install step and the tests share one notion of installed.
func TestSandboxCheckNamesWhatIsMissing(t *testing.T) {
	t.Setenv("LOCKBENCH_ETCD_BIN", t.TempDir()+"/no-etcd")
	code, stdout, stderr := run("sandbox", "--check")
	if code != ExitFailure || !strings.Contains(stdout, "missing etcd: ") || !strings.Contains(stdout, "go build") ||
		!strings.HasPrefix(stderr, "lockbench: not installed: etcd") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %d, a line naming etcd missing with how to build it", code, stdout, stderr, ExitFailure)
	}
	if n := strings.Count(stdout, "\n"); n < 3 {
		t.Errorf("%d lines, want one per server kind:\n%s", n, stdout)
	}
}
