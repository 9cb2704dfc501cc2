package cli

import (
	"github.com/lockbench/lockbench/result"

	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/report"
)

// writeResults writes a small results directory as `lockbench run` does.
func writeResults(t *testing.T, perS float64) string {
	t.Helper()
	dir := t.TempDir()
	start := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	meta := map[string]any{"lockbench_version": "test", "started": start,
		"host": map[string]string{"os": "linux", "arch": "amd64", "cpus": "2"}}
	cells := []result.Cell{
		{Impl: "redis", Scenario: "hot", Clients: 1, Locks: 1, DurationS: 2, Acquires: int64(2 * perS), AcquiresPerS: perS,
			AcquireLatencyUs: result.Latency{P50: 100, P90: 150, P99: 300, P999: 500, Max: 900}},
		{Impl: "redis", Scenario: "hot", Clients: 4, Locks: 1, DurationS: 2, Acquires: int64(3 * perS), AcquiresPerS: 1.5 * perS,
			AcquireLatencyUs: result.Latency{P50: 400, P90: 900, P99: 2500, P999: 4000, Max: 9000}, RetriesPerAcquire: 2},
	}
	if err := result.WriteJSON(filepath.Join(dir, result.MetaFile), meta); err != nil {
		t.Fatal(err)
	}
	if err := result.WriteJSON(filepath.Join(dir, result.SummaryFile), result.Summary{Started: start, Cells: cells}); err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		var b bytes.Buffer
		w := hdrhistogram.NewHistogramLogWriter(&b)
		ms := start.UnixMilli()
		w.OutputLogFormatVersion()
		w.OutputStartTime(ms)
		w.OutputBaseTime(ms)
		w.OutputLegend()
		for s := range 2 {
			h := hdrhistogram.New(1, 3_600_000_000, 3)
			h.RecordValues(int64(c.AcquireLatencyUs.P50), c.Acquires/2)
			h.SetTag(result.TagAcquire)
			h.SetStartTimeMs(ms + int64(s)*1000)
			h.SetEndTimeMs(ms + int64(s+1)*1000)
			if err := w.OutputIntervalHistogram(h); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, result.CellFile(c)+result.HlogExt), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runMain(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestReportCommand(t *testing.T) {
	t.Parallel()
	dir := writeResults(t, 1000)
	code, out, errOut := runMain("report", dir, "--slo", "p99=5ms")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	sum, err := result.ReadSummary(filepath.Join(dir, result.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	report.WriteTable(&table, sum.Cells)
	if !strings.HasPrefix(out, table.String()) {
		t.Errorf("output does not start with the results table:\n%s\nwant:\n%s", out, table.String())
	}
	for _, f := range []string{report.CSVFile, report.BenchFile, report.MarkdownFile, report.HTMLFile,
		"redis_hot_c4" + result.HgrmExt, filepath.Join(report.PlotsDir, "throughput.png")} {
		p := filepath.Join(dir, f)
		if !strings.Contains(errOut, "wrote "+p+"\n") {
			t.Errorf("stderr does not list %s", p)
		}
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if !strings.Contains(out, "capacity at p99 ≤ 5ms:\n  redis        hot      4 clients at 1,500 acq/s") {
		t.Errorf("stdout lacks the capacity plan:\n%s", out)
	}
	if strings.Contains(out, "wrote ") {
		t.Errorf("stdout carries the files written, which belong on stderr:\n%s", out)
	}
	if !strings.Contains(string(md), "Best client count tried at p99 ≤ 5ms") {
		t.Errorf("summary.md lacks the capacity for --slo:\n%s", md)
	}
}

func TestReportAndCompareErrors(t *testing.T) {
	t.Parallel()
	dir := writeResults(t, 1000)
	missing := filepath.Join(t.TempDir(), "missing")
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, result.MetaFile), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(bad, result.SummaryFile), []byte("{not json"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"report: no directory", []string{"report"}, ExitUsage},
		{"report: two directories", []string{"report", dir, dir}, ExitUsage},
		{"report: bad flag", []string{"report", dir, "--nope"}, ExitUsage},
		{"report: bad SLO", []string{"report", dir, "--slo", "p97=1ms"}, ExitUsage},
		{"report: bad format", []string{"report", dir, "--format", "yaml"}, ExitUsage},
		{"compare: bad format", []string{"compare", dir, dir, "--format", "xml"}, ExitUsage},
		{"report: missing directory", []string{"report", missing}, ExitUsage}, // a path: exit 2 everywhere
		{"report: unreadable summary", []string{"report", bad}, ExitFailure},
		{"compare: one directory", []string{"compare", dir}, ExitUsage},
		{"compare: bad noise", []string{"compare", dir, dir, "--noise", "-1"}, ExitUsage},
		{"compare: missing directory", []string{"compare", dir, missing}, ExitUsage},
		{"compare: unreadable summary", []string{"compare", bad, dir}, ExitFailure},
	} {
		code, out, errOut := runMain(tc.args...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", tc.name, code, tc.code, errOut)
		}
		if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "lockbench: ") {
			t.Errorf("%s: stderr %q, want one line", tc.name, errOut)
		}
		if out != "" {
			t.Errorf("%s: stdout %q, want nothing", tc.name, out)
		}
	}
}

func TestCompareCommand(t *testing.T) {
	t.Parallel()
	old, new := writeResults(t, 1000), writeResults(t, 1200)
	code, out, errOut := runMain("compare", old, new)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"impl=redis/scenario=hot/clients=1", "impl=redis/scenario=hot/clients=4",
		"1,000 → 1,200", "+20.0%", "better", "~ noise"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runMain("compare", old, new, "--noise", "50")
	if code != ExitOK || strings.Contains(out, "better") {
		t.Errorf("with --noise 50 a 20%% change is noise; exit %d:\n%s", code, out)
	}
}

// compare refuses partial results in one line that names the command and
// the directory, not the package that found it partial.
func TestCompareOfPartialResultsNamesNoPackage(t *testing.T) {
	t.Parallel()
	dir := writeResults(t, 1000)
	sum, err := result.ReadSummary(filepath.Join(dir, result.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	sum.Partial = &result.Partial{Reason: "shard 1 stopped", Missing: []result.MissingCell{{Cell: "redis_hot_c8", Why: "shard 1 stopped mid-cell"}}}
	if err := result.WriteJSON(filepath.Join(dir, result.SummaryFile), sum); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runMain("compare", writeResults(t, 1000), dir)
	want := "lockbench: compare: " + dir + ": partial results (merge --partial) cannot be compared: "
	if code != ExitFailure || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want 1 and one line opening %q", code, errOut, want)
	}
}
