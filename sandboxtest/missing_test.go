package sandboxtest

import (
	"fmt"
	"github.com/lockbench/lockbench/internal/serverkind"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/sandbox"
)

// recorder is a test whose Fatalf and Skip are recorded, not obeyed past
// stopping the call, so that what a real test would do can be checked.
type recorder struct {
	testing.TB
	failed, skipped string
}

type stopped struct{}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(stopped{})
}
func (r *recorder) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	panic(stopped{})
}
func (r *recorder) Cleanup(func()) {}

// call runs f as a test body on r, until it returns or r stops it.
func (r *recorder) call(f func()) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(stopped); !ok {
				panic(v)
			}
		}
	}()
	f()
}

// A sandbox that cannot find one server — its binary hidden from the
// lookup — fails the test with CI set, naming the server, and skips it
// without CI, saying why.
func TestMissingServerFailsUnderCI(t *testing.T) {
	t.Setenv("LOCKBENCH_ETCD_BIN", t.TempDir()+"/hidden-etcd")
	for _, ci := range []string{"true", ""} {
		t.Setenv("CI", ci)
		r := &recorder{TB: t}
		r.call(func() { StartFleet(r, sandbox.Spec{serverkind.Etcd: 1}) })
		got := r.failed
		if ci == "" {
			got = r.skipped
			if r.failed != "" {
				t.Errorf("CI unset: failed %q, want a skip", r.failed)
			}
		} else if r.skipped != "" {
			t.Errorf("CI=%s: skipped %q, want a failure", ci, r.skipped)
		}
		if !strings.Contains(got, "etcd") || !strings.Contains(got, "LOCKBENCH_ETCD_BIN") {
			t.Errorf("CI=%q: %q does not name the missing server and where it was looked for", ci, got)
		}
		t.Logf("CI=%q: fail %q skip %q", ci, r.failed, r.skipped)
	}
}
