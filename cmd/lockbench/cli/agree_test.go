package cli

import (
	"bytes"
	"errors"
	"html"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
)

// The exit status and the report's Safety line agree for every kind of
// unsafety, each from one typed cell: an unsafe cell exits 3 and its
// Safety line, as text, Markdown and HTML, says UNSAFE and names what
// fired; a safe cell exits 0 and its line says ✓.
func TestExitAndSafetyLineAgree(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cell   result.Cell
		unsafe bool
		// names is what both the CLI's error and the Safety line must say
		// fired.
		names string
	}{
		{"overlap", result.Cell{SafetyViolations: 1, Safety: &result.Safety{Overlaps: 1, Tokens: result.TokensLock}},
			true, "1 overlap"},
		{"token regression", result.Cell{SafetyViolations: 2, Safety: &result.Safety{TokenRegressions: 2, Tokens: result.TokensLock}},
			true, "2 token regressions"},
		{"lost update", result.Cell{Safety: &result.Safety{Guarded: true, Tokens: result.TokensNone, GuardCounts: result.GuardCounts{GuardedWrites: 40, LostUpdates: 3}}},
			true, "3 lost updates"},
		{"not linearizable", result.Cell{Safety: &result.Safety{Linearizable: result.NotLinearizable, Ops: 12, Tokens: result.TokensNone}},
			true, "not linearizable"},
		{"safe", result.Cell{Safety: &result.Safety{Linearizable: result.Linearizable, Ops: 12, Tokens: result.TokensLock, Guarded: true, GuardCounts: result.GuardCounts{GuardedWrites: 40, LostUpdates: 5}}}, false, "✓ 0 violations"},
		// A check that ran out of its budget decides nothing.
		{"unknown", result.Cell{Safety: &result.Safety{Linearizable: result.VerdictUnknown, Ops: 12, Tokens: result.TokensNone}},
			false, "✓ 0 violations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := tc.cell
			c.Impl, c.Scenario, c.Kind, c.Clients, c.DurationS = "redis", "hot", result.KindClosed, 4, 2
			c.Acquires, c.AcquiresPerS = 100, 50
			c.AcquireLatencyUs = result.Latency{P50: 800, P90: 900, P99: 1000, P999: 1100, Max: 1200, Mean: 820}
			sum := &result.Summary{Schema: result.SchemaVersion, Cells: []result.Cell{c}}

			err := unsafeCells(sum)
			code := 0
			if err != nil {
				code = exitCode(err, t.Context(), io.Discard)
			}
			want := 0
			if tc.unsafe {
				want = ExitUnsafe
			}
			if code != want || errors.Is(err, errUnsafe) != tc.unsafe {
				t.Fatalf("exit status %d (%v), want %d", code, err, want)
			}
			if tc.unsafe && !strings.Contains(err.Error(), tc.names) {
				t.Errorf("the CLI's message %q does not name %q", err, tc.names)
			}

			var text bytes.Buffer
			if err := report.WriteVerdict(&text, sum.Cells, nil); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			meta := map[string]any{"lockbench_version": "test", "impls": []string{"redis"}, "scenarios": []string{"hot"},
				"clients": []int{4}, "duration_s": 2}
			if err := result.WriteJSON(filepath.Join(dir, result.MetaFile), meta); err != nil {
				t.Fatal(err)
			}
			if err := result.WriteJSON(filepath.Join(dir, result.SummaryFile), sum); err != nil {
				t.Fatal(err)
			}
			if err := report.Render(dir, report.RenderOptions{}); err != nil {
				t.Fatal(err)
			}
			md, err := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
			if err != nil {
				t.Fatal(err)
			}
			page, err := os.ReadFile(filepath.Join(dir, report.HTMLFile))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []struct{ form, line string }{
				{"text", safetyLineOf(t, text.String(), "Safety: ")},
				{"markdown", safetyLineOf(t, string(md), "Safety:** ")},
				{"html", html.UnescapeString(safetyLineOf(t, string(page), `<span class="q">Safety:</span> `))},
			} {
				if strings.Contains(r.line, "UNSAFE") != tc.unsafe || strings.Contains(r.line, "✓") == tc.unsafe {
					t.Errorf("%s Safety line %q disagrees with exit status %d", r.form, r.line, code)
				}
				if !strings.Contains(r.line, tc.names) {
					t.Errorf("%s Safety line %q does not say %q", r.form, r.line, tc.names)
				}
			}
		})
	}
}

// safetyLineOf is the Safety line of a rendered report: from the
// question's mark to the end of its line (its paragraph, as text).
func safetyLineOf(t *testing.T, doc, mark string) string {
	t.Helper()
	i := strings.Index(doc, mark)
	if i < 0 {
		t.Fatalf("no Safety line (%q) in\n%s", mark, doc)
	}
	lines := strings.Split(doc[i+len(mark):], "\n")
	line := lines[0]
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "    ") { // text continues a paragraph on indented lines
			break
		}
		line += " " + l
	}
	return strings.Join(strings.Fields(line), " ")
}
