package docs

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/report"
)

// The guide to known issues and the report's section list the same
// issues: each of the report's has its row in the guide's table, with
// every public report it cites, and each scenario of the guide's table
// is one the report lists.
func TestKnownIssuesGuideAndReportAgree(t *testing.T) {
	b, err := os.ReadFile("known-issues.md")
	if err != nil {
		t.Fatal(err)
	}
	guide := string(b)
	rows := map[string]string{} // scenario → the guide's row
	for _, l := range strings.Split(guide, "\n") {
		if m := regexp.MustCompile("\\| `([a-z-]+)` \\|$").FindStringSubmatch(l); m != nil {
			rows[m[1]] = l
		}
	}
	seen := map[string]bool{}
	for _, k := range report.KnownIssues {
		seen[k.Scenario] = true
		row, ok := rows[k.Scenario]
		if !ok {
			t.Errorf("the report lists %q (scenario %s); the guide's table has no row for it", k.Title, k.Scenario)
			continue
		}
		for _, r := range k.Reports {
			if n := r.Name[strings.LastIndex(r.Name, "#")+1:]; strings.Contains(r.Name, "#") && !strings.Contains(row, "#"+n) {
				t.Errorf("the guide's %s row does not cite %s", k.Scenario, r.Name)
			}
		}
		if !strings.Contains(k.Command, "--scenario "+k.Scenario) {
			t.Errorf("%s: command %q does not run its scenario", k.Scenario, k.Command)
		}
	}
	for sc := range rows {
		if !seen[sc] {
			t.Errorf("the guide lists scenario %s; the report's known issues do not", sc)
		}
	}
	if len(rows) == 0 {
		t.Fatal("no rows read from the guide's table")
	}
}
