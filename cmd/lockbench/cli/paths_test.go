package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A path a command was named to read that is missing or cannot be opened
// exits 2 with one line naming it, in every command that reads paths.
func TestMissingOrUnreadablePathIsExit2Everywhere(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	existing := t.TempDir()
	for _, bad := range []string{filepath.Join(tmp, "missing"), filepath.Join(file, "under-a-file")} {
		for name, args := range map[string][]string{
			"report":         {"report", bad},
			"compare old":    {"compare", bad, existing},
			"compare new":    {"compare", existing, bad},
			"benchcheck old": {"benchcheck", bad, file},
			"benchcheck new": {"benchcheck", file, bad},
			"merge":          {"merge", "--out", filepath.Join(t.TempDir(), "m"), bad},
		} {
			code, out, errOut := run(args...)
			if code != ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, bad) {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want exit 2 and one line naming it", name, bad, code, out, errOut)
			}
		}
	}
	for _, cmd := range []string{"report", "compare", "benchcheck", "merge"} {
		_, out, _ := run(cmd, "--help")
		if !strings.Contains(out, "missing or unreadable") {
			t.Errorf("%s --help does not say what a missing or unreadable path exits with", cmd)
		}
	}
}
