package cli

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
)

func TestReportFormatsParseBack(t *testing.T) {
	t.Parallel()
	dir := writeResults(t, 1000)
	code, out, errOut := runMain("report", dir, "--format", "json")
	if code != ExitOK {
		t.Fatalf("json: exit %d, stderr %q", code, errOut)
	}
	var sum result.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if len(sum.Cells) != 2 || sum.Cells[1].Clients != 4 || sum.Cells[1].AcquireLatencyUs.P99 != 2500 {
		t.Errorf("JSON summary = %+v, want the two cells written", sum.Cells)
	}
	code, out, errOut = runMain("report", dir, "--format", "csv")
	if code != ExitOK {
		t.Fatalf("csv: exit %d, stderr %q", code, errOut)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("stdout is not CSV: %v\n%s", err, out)
	}
	if len(rows) != 3 {
		t.Fatalf("CSV has %d rows, want a header and 2 cells", len(rows))
	}
	for _, col := range []string{"impl", "clients", "acquire_latency_us_p50", "acquire_latency_us_p90", "acquire_latency_us_p95",
		"acquire_latency_us_p99", "acquire_latency_us_p999", "acquire_latency_us_p9999", "acquire_latency_us_max"} {
		i := slices.Index(rows[0], col)
		if i < 0 {
			t.Errorf("CSV lacks column %s", col)
			continue
		}
		if col == "acquire_latency_us_p99" && rows[2][i] != "2500" {
			t.Errorf("CSV p99 of the 4-client cell = %s, want 2500", rows[2][i])
		}
	}
	file, _ := os.ReadFile(filepath.Join(dir, report.CSVFile))
	if string(file) != out {
		t.Errorf("--format csv differs from summary.csv")
	}
}

func TestSLOMissExits5AfterWriting(t *testing.T) {
	t.Parallel()
	dir := writeResults(t, 1000)
	code, out, errOut := runMain("report", dir, "--slo", "p99<=1ms,errors<=0.1%", "--format", "json")
	if code != ExitSLO {
		t.Fatalf("exit %d, want %d (stderr %q)", code, ExitSLO, errOut)
	}
	if !strings.Contains(errOut, "impl=redis/scenario=hot/clients=4  p99<=1ms  2.50ms against 1.00ms (2.5×)") {
		t.Errorf("stderr does not name the cell and by how much it missed:\n%s", errOut)
	}
	if strings.Contains(errOut, "clients=1 ") {
		t.Errorf("stderr names the 1-client cell, which met the SLO:\n%s", errOut)
	}
	var sum result.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if sum.SLOMet == nil || *sum.SLOMet || len(sum.SLOBreaches) != 1 || sum.SLOBreaches[0].Value != 2500 || sum.SLOBreaches[0].Clients != 4 {
		t.Errorf("summary: slo_met %v, breaches %+v; want one breach of the 4-client cell at 2500µs", sum.SLOMet, sum.SLOBreaches)
	}
	if len(sum.Capacity) != 1 || sum.Capacity[0].Clients != 1 {
		t.Errorf("capacity = %+v, want 1 client", sum.Capacity)
	}
	if _, err := os.Stat(filepath.Join(dir, report.HTMLFile)); err != nil {
		t.Errorf("the report was not written before exiting 5: %v", err)
	}
}

// setMeta rewrites keys of a results directory's meta.json.
func setMeta(t *testing.T, dir string, kv map[string]any) {
	t.Helper()
	p := filepath.Join(dir, result.MetaFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range kv {
		m[k] = v
	}
	if err := result.WriteJSON(p, m); err != nil {
		t.Fatal(err)
	}
}

func TestCompareWarnsOnSetUpAndGatesOnRegression(t *testing.T) {
	t.Parallel()
	old, new := writeResults(t, 1000), writeResults(t, 450)
	setMeta(t, old, map[string]any{"hold": "1ms", "clients": []int{1, 4}, "impls": []string{"redis"},
		"server_versions": map[string]string{"redis 127.0.0.1:6379": "7.0.15"}})
	setMeta(t, new, map[string]any{"hold": "5ms", "clients": []int{1, 4, 16}, "impls": []string{"redis"},
		"server_versions": map[string]string{"redis 127.0.0.1:7000": "7.2.4"},
		"host":            map[string]string{"os": "linux", "arch": "arm64", "cpus": "2"}})
	code, out, errOut := runMain("compare", old, new, "--format", "json")
	if code != ExitRegressed {
		t.Fatalf("exit %d, want %d (stderr %q)", code, ExitRegressed, errOut)
	}
	for _, want := range []string{
		"warning: plan differs: hold 1ms → 5ms",
		"warning: client counts differ: clients 1, 4 → 1, 4, 16",
		"warning: machine differs: host.arch amd64 → arm64",
		"warning: server versions differ: redis 7.0.15 → redis 7.2.4",
		"regressed: impl=redis/scenario=hot/clients=1: acq/s 1,000 → 450 (-55.0%)",
	} {
		if !strings.Contains(errOut, want+"\n") {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "implementations differ") || strings.Contains(errOut, "started") {
		t.Errorf("stderr warns of what does not differ or differs by design:\n%s", errOut)
	}
	var cmp report.Comparison
	if err := json.Unmarshal([]byte(out), &cmp); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if len(cmp.Regressions) != 2 || len(cmp.Warnings) != 4 || len(cmp.Cells) != 2 || cmp.Cells[0].Metrics[0].New != 450 {
		t.Errorf("comparison = %+v, want 2 regressions (acq/s of both cells) and 4 warnings", cmp)
	}
	// The same runs, the other way round, improved: nothing to gate on.
	code, _, errOut = runMain("compare", new, old, "--format", "csv")
	if code != ExitOK {
		t.Errorf("an improvement exits %d, want 0 (stderr %q)", code, errOut)
	}
}

// TestHelpPlaceholdersNameWhatTheyAre checks every flag of every command:
// its value is named for what it is (N, DURATION, ADDRS), never for the Go
// type that holds it, and --help prints once, to stdout, exit 0.
func TestHelpPlaceholdersNameWhatTheyAre(t *testing.T) {
	t.Parallel()
	goType := regexp.MustCompile(`(?m)^\s+(-\w, )?--(\S+) (int|int64|uint|uint64|string|strings|stringArray|duration|float|float64)\s`)
	for _, c := range commands() {
		code, out, errOut := runMain(c.name, "--help")
		if code != ExitOK || errOut != "" || strings.Count(out, "Usage: lockbench") != 1 {
			t.Errorf("%s --help: exit %d, stderr %q, %d usages on stdout", c.name, code, errOut, strings.Count(out, "Usage: lockbench"))
		}
		for _, m := range goType.FindAllStringSubmatch(out, -1) {
			t.Errorf("%s --%s: value named by its Go type %q", c.name, m[2], m[3])
		}
	}
}

// TestRunSLOAndFormats runs the in-process lock (no server): stdout holds
// the result alone, in each format, and a missed threshold exits 5 with
// every file written and the miss in summary.json.
func TestRunSLOAndFormats(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	// A lone client waits for no one; four on one lock held 40 ms wait
	// for each other, far past 15 ms, however loaded the machine.
	args := []string{"run", "--impl", "inproc", "--clients", "1,4", "--duration", "500ms", "--warmup", "0s",
		"--hold", "40ms", "-q", "--out", dir}
	code, out, errOut := runMain(append(args, "--slo", "p99<=15ms,errors<=0.1%", "--format", "json")...)
	if code != ExitSLO {
		t.Fatalf("exit %d, want %d; stderr %q", code, ExitSLO, errOut)
	}
	var sum result.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("stdout is not JSON alone: %v\n%s", err, out)
	}
	if sum.SLOMet == nil || *sum.SLOMet || len(sum.SLOBreaches) != 1 || sum.SLOBreaches[0].Clients != 4 ||
		sum.SLOBreaches[0].Threshold != "p99<=15ms" || sum.SLOBreaches[0].Value <= 15000 {
		t.Errorf("slo_met %v, breaches %+v; want the 4-client cell alone, over 15ms", sum.SLOMet, sum.SLOBreaches)
	}
	onDisk, err := result.ReadSummary(filepath.Join(dir, result.SummaryFile))
	if err != nil || len(onDisk.SLOBreaches) != 1 {
		t.Errorf("summary.json: %v, breaches %+v", err, onDisk)
	}
	if !strings.Contains(errOut, "impl=inproc/scenario=hot/clients=4  p99<=15ms  ") {
		t.Errorf("stderr does not name the cell that missed:\n%s", errOut)
	}
	for _, f := range []string{report.HTMLFile, report.CSVFile, report.MarkdownFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("not written before exit 5: %v", err)
		}
	}

	code, out, errOut = runMain(append(args, "--force", "--format", "csv")...)
	if code != ExitOK {
		t.Fatalf("csv: exit %d; stderr %q", code, errOut)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 3 || rows[0][0] != "impl" {
		t.Errorf("stdout is not the CSV of 2 cells alone (%v):\n%s", err, out)
	}

	code, out, errOut = runMain(append(args, "--force")...)
	if code != ExitOK {
		t.Fatalf("table: exit %d; stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	table, verdict, _ := strings.Cut(out, "\nverdict:\n")
	var tableRows []string // notes under a row (indented) come and go with the machine's load
	for _, l := range strings.Split(strings.TrimSpace(table), "\n") {
		if !strings.HasPrefix(l, " ") {
			tableRows = append(tableRows, l)
		}
	}
	if len(tableRows) != 3 || !strings.HasPrefix(tableRows[0], "impl") {
		t.Errorf("stdout is not a header and 2 rows, then the verdict:\n%s", out)
	}
	if !strings.HasPrefix(verdict, "  Safety: ") {
		t.Errorf("no verdict under the table, its first answer Safety:\n%s", out)
	}
	for _, l := range lines {
		if len([]rune(l)) > report.TableWidth {
			t.Errorf("line wider than %d: %q", report.TableWidth, l)
		}
	}
	if !strings.Contains(errOut, "results: "+filepath.Join(dir, result.SummaryFile)) {
		t.Errorf("stderr does not name the results:\n%s", errOut)
	}
}
