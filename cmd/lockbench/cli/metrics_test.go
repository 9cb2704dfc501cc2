package cli

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --metrics-addr that is not HOST:PORT is refused in one line, exit 2,
// before anything starts; one whose port is taken is a runtime failure,
// exit 1, and leaves no results directory behind.
func TestMetricsAddrRefusals(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for name, tc := range map[string]struct {
		addr string
		code int
		want string
	}{
		"no port":    {"127.0.0.1", ExitUsage, `--metrics-addr "127.0.0.1": want HOST:PORT`},
		"bad port":   {"127.0.0.1:http-ish", ExitUsage, "want HOST:PORT"},
		"port range": {":70000", ExitUsage, "want HOST:PORT"},
		"port taken": {ln.Addr().String(), 1, "metrics endpoint"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := run("run", "--impl", "inproc", "--clients", "1", "--duration", "1s", "--metrics-addr", tc.addr, "--out", out)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d and one line with %q", name, code, stdout, stderr, tc.code, tc.want)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the refused run made its --out: %v", name, err)
		}
	}
}
