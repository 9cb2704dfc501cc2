package report

import (
	"github.com/lockbench/lockbench/result"
	"time"

	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"fmt"
	"html"
	"html/template"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// renderFixture writes the fixture run into a fresh directory, renders it
// and returns the directory and the files written.
func renderFixture(t *testing.T, sum *Summary, logs bool, opts RenderOptions) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	writeFixtureDir(t, dir, sum, logs)
	var written []string
	opts.OnWrite = func(p string) { written = append(written, p) }
	if err := Render(dir, opts); err != nil {
		t.Fatalf("Render: %v", err)
	}
	return dir, written
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRenderSummaryCSV(t *testing.T) {
	t.Parallel()
	sum := fixtureSummary()
	dir, _ := renderFixture(t, sum, false, RenderOptions{})
	recs, err := csv.NewReader(bytes.NewReader(readFile(t, filepath.Join(dir, CSVFile)))).ReadAll()
	if err != nil {
		t.Fatalf("summary.csv does not parse: %v", err)
	}
	if len(recs) != len(sum.Cells)+1 {
		t.Fatalf("summary.csv has %d records, want header + %d cells", len(recs), len(sum.Cells))
	}
	head := recs[0]
	col := map[string]int{}
	for i, h := range head {
		if _, dup := col[h]; dup {
			t.Errorf("column %q appears twice", h)
		}
		col[h] = i
	}
	for _, want := range []string{"impl", "scenario", "clients", "acquires_per_s", "acquire_latency_us_p99",
		"release_latency_us_max", "round_trips", "release_wakeups", "theory_wakeups", "server_watch_triggered",
		"server_packets_sent", "errors_by_class_timeout", "safety_violations", "settle"} {
		if _, ok := col[want]; !ok {
			t.Errorf("summary.csv lacks column %q; have %v", want, head)
		}
	}
	if head[0] != "impl" || head[1] != "scenario" || head[2] != "clients" {
		t.Errorf("columns start %v, want impl, scenario, clients (Cell's order)", head[:3])
	}
	for i, c := range sum.Cells {
		row := recs[i+1]
		if row[col["impl"]] != c.Impl || row[col["clients"]] != fmt.Sprint(c.Clients) {
			t.Errorf("row %d is %s/%s, want %s", i, row[col["impl"]], row[col["clients"]], c.Key())
		}
		if got, _ := strconv.ParseFloat(row[col["acquire_latency_us_p99"]], 64); got != c.AcquireLatencyUs.P99 {
			t.Errorf("%s: acquire_latency_us_p99 = %v, want %v", c.Key(), got, c.AcquireLatencyUs.P99)
		}
		if got := row[col["round_trips"]]; got != fmt.Sprint(c.RoundTrips) {
			t.Errorf("%s: round_trips = %s, want %d", c.Key(), got, c.RoundTrips)
		}
		wantTheory := ""
		if c.TheoryWakeups != nil {
			wantTheory = fmt.Sprint(*c.TheoryWakeups)
		}
		if got := row[col["theory_wakeups"]]; got != wantTheory {
			t.Errorf("%s: theory_wakeups = %q, want %q", c.Key(), got, wantTheory)
		}
		wantWatch := ""
		if v, ok := c.ServerCounts.Fired(); ok {
			wantWatch = fmt.Sprint(v)
		}
		if got := row[col["server_watch_triggered"]]; got != wantWatch {
			t.Errorf("%s: server_watch_triggered = %q, want %q", c.Key(), got, wantWatch)
		}
	}
}

func TestSummaryCSVFlattensPointersAndMaps(t *testing.T) {
	t.Parallel()
	a := Cell{Impl: "a", Distributions: map[string]result.Spread{"validity_ms": {Count: 3, P1: 1.5}},
		Faults: &result.Faults{Repeats: 2, RecoveryMs: &result.Spread{P50: 12}, Partition: &result.PartitionFigures{MastersCutMajority: 3},
			ConnCrash: &result.ConnCrashFigures{Silent: result.ConnEnd{Unfreed: 1}}}}
	b := Cell{Impl: "b"}
	data, err := summaryCSV([]Cell{a, b})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	get := func(row int, name string) string {
		i := slices.Index(recs[0], name)
		if i < 0 {
			t.Fatalf("no column %q in %v", name, recs[0])
		}
		return recs[row][i]
	}
	for _, tc := range []struct {
		col  string
		a, b string
	}{
		{"distributions_validity_ms_p1", "1.5", ""},
		{"distributions_validity_ms_count", "3", ""},
		{"faults_repeats", "2", ""},
		{"faults_recovery_ms_p50", "12", ""},
		{"faults_partition_masters_cut_majority", "3", ""},
		{"faults_conn_crash_silent_unfreed", "1", ""},
	} {
		if got := get(1, tc.col); got != tc.a {
			t.Errorf("a: %s = %q, want %q", tc.col, got, tc.a)
		}
		if got := get(2, tc.col); got != tc.b {
			t.Errorf("b: %s = %q, want %q (blank when absent)", tc.col, got, tc.b)
		}
	}
}

// benchLine is one result line of the Go benchmark format.
type benchLine struct {
	name   string
	iters  int64
	values map[string]float64
}

var configLine = regexp.MustCompile(`^([a-z][^\sA-Z:]*): (.*)$`)

// parseBenchStrict reads the Go benchmark format as golang.org/x/perf's
// benchfmt does, but rejects any line that is neither configuration nor a
// result, instead of passing it over.
func parseBenchStrict(data []byte) (map[string]string, []benchLine, error) {
	config := map[string]string{}
	var out []benchLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := configLine.FindStringSubmatch(line); m != nil {
			config[m[1]] = m[2]
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f[0]) == len("Benchmark") ||
			unicode.IsLower(rune(f[0][len("Benchmark")])) {
			return nil, nil, fmt.Errorf("line %d: neither configuration nor a benchmark: %q", n, line)
		}
		iters, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || iters <= 0 {
			return nil, nil, fmt.Errorf("line %d: iterations %q", n, f[1])
		}
		if len(f[2:])%2 != 0 {
			return nil, nil, fmt.Errorf("line %d: values and units do not pair up", n)
		}
		b := benchLine{name: f[0], iters: iters, values: map[string]float64{}}
		for i := 2; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, nil, fmt.Errorf("line %d: value %q", n, f[i])
			}
			if _, dup := b.values[f[i+1]]; dup {
				return nil, nil, fmt.Errorf("line %d: unit %q twice", n, f[i+1])
			}
			b.values[f[i+1]] = v
		}
		out = append(out, b)
	}
	return config, out, sc.Err()
}

func TestRenderBenchTxt(t *testing.T) {
	t.Parallel()
	sum := fixtureSummary()
	sum.Cells = append(sum.Cells, Cell{Impl: "redis", Scenario: "hot", Clients: 64, Errors: 10}) // nothing acquired
	dir, _ := renderFixture(t, sum, false, RenderOptions{})
	config, results, err := parseBenchStrict(readFile(t, filepath.Join(dir, BenchFile)))
	if err != nil {
		t.Fatalf("bench.txt: %v", err)
	}
	if config["goos"] != "linux" || config["goarch"] != "amd64" || config["pkg"] != "lockbench" {
		t.Errorf("config = %v, want goos linux, goarch amd64, pkg lockbench", config)
	}
	if len(results) != len(sum.Cells)-1 {
		t.Fatalf("%d results, want %d (the cell without acquisitions left out)", len(results), len(sum.Cells)-1)
	}
	for i, r := range results {
		c := sum.Cells[i]
		if want := "BenchmarkLock/" + c.Key(); r.name != want {
			t.Errorf("name %q, want %q", r.name, want)
		}
		if r.iters != c.Acquires {
			t.Errorf("%s: iterations %d, want %d", c.Key(), r.iters, c.Acquires)
		}
		for unit, want := range map[string]float64{
			"ns/op": 1e9 / c.AcquiresPerS, "acquires/s": c.AcquiresPerS,
			"p50-ns": c.AcquireLatencyUs.P50 * 1000, "p99-ns": c.AcquireLatencyUs.P99 * 1000,
			"notifications/op": c.NotificationsPerAcquire, "retries/op": c.RetriesPerAcquire,
		} {
			got, ok := r.values[unit]
			if !ok || math.Abs(got-want) > 1e-3*math.Abs(want)+1e-9 {
				t.Errorf("%s: %s = %v, want %v", c.Key(), unit, got, want)
			}
		}
	}
}

func TestRenderHgrmMatchesHlog(t *testing.T) {
	t.Parallel()
	sum := fixtureSummary()
	dir, _ := renderFixture(t, sum, true, RenderOptions{})
	for _, c := range sum.Cells {
		// The .hlog, read with HdrHistogram's own reader.
		f, err := os.Open(result.CellPath(dir, c, result.HlogExt))
		if err != nil {
			t.Fatal(err)
		}
		r := hdrhistogram.NewHistogramLogReader(f)
		merged := result.NewHistogram()
		for {
			h, err := r.NextIntervalHistogram()
			if err != nil {
				t.Fatal(err)
			}
			if h == nil {
				break
			}
			if h.Tag() == result.TagAcquire {
				merged.Merge(h)
			}
		}
		f.Close()

		rows, footer := parseHgrm(t, readFile(t, result.CellPath(dir, c, result.HgrmExt)))
		last := rows[len(rows)-1]
		if last.count != merged.TotalCount() || last.pct != 1 {
			t.Errorf("%s: last row %+v, want percentile 1 and count %d", c.Key(), last, merged.TotalCount())
		}
		if want := float64(merged.Max()) / 1000; math.Abs(footer["Max"]-want) > 0.001 {
			t.Errorf("%s: .hgrm max %v ms, want %v ms (µs ÷ 1000)", c.Key(), footer["Max"], want)
		}
		if footer["Total count"] != float64(merged.TotalCount()) {
			t.Errorf("%s: .hgrm total count %v, want %d", c.Key(), footer["Total count"], merged.TotalCount())
		}
		for i := 1; i < len(rows); i++ {
			if rows[i].value < rows[i-1].value || rows[i].pct < rows[i-1].pct || rows[i].count < rows[i-1].count {
				t.Fatalf("%s: .hgrm row %d goes backwards: %+v after %+v", c.Key(), i, rows[i], rows[i-1])
			}
		}
	}
}

type hgrmRow struct {
	value, pct float64
	count      int64
}

// parseHgrm reads HdrHistogram's classic percentile text: a header, a
// blank line, rows of value, percentile, count and 1/(1−percentile), and
// a footer of #[Name = value, …] lines.
func parseHgrm(t *testing.T, data []byte) ([]hgrmRow, map[string]float64) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if strings.TrimSpace(lines[0]) != "Value\tPercentile\tTotalCount\t1/(1-Percentile)" || lines[1] != "" {
		t.Fatalf(".hgrm header: %q %q", lines[0], lines[1])
	}
	var rows []hgrmRow
	footer := map[string]float64{}
	for _, l := range lines[2:] {
		if strings.HasPrefix(l, "#[") {
			for _, kv := range strings.Split(strings.Trim(l, "#[]"), ",") {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Fatalf(".hgrm footer %q", l)
				}
				x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					t.Fatalf(".hgrm footer %q: %v", l, err)
				}
				footer[strings.TrimSpace(k)] = x
			}
			continue
		}
		f := strings.Fields(l)
		if len(f) != 4 {
			t.Fatalf(".hgrm row %q: want 4 fields", l)
		}
		var r hgrmRow
		var err1, err2, err3 error
		r.value, err1 = strconv.ParseFloat(f[0], 64)
		r.pct, err2 = strconv.ParseFloat(f[1], 64)
		r.count, err3 = strconv.ParseInt(f[2], 10, 64)
		if _, err := strconv.ParseFloat(f[3], 64); err != nil && f[3] != "inf" {
			t.Fatalf(".hgrm row %q: %v", l, err)
		}
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatalf(".hgrm row %q: %v", l, err)
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 || len(footer) != 6 {
		t.Fatalf(".hgrm: %d rows, footer %v", len(rows), footer)
	}
	return rows, footer
}

func TestRenderHTMLSelfContained(t *testing.T) {
	t.Parallel()
	sum := fixtureSummary()
	sum.Cells[1].SafetyViolations = 2
	sum.Cells[1].Violations = []result.Violation{{Lock: "l0", Kind: "overlap", Holder: 1, Intruder: 3, AtS: 1.5}}
	dir, written := renderFixture(t, sum, true, RenderOptions{SLO: "p99=10ms"})
	page := string(readFile(t, filepath.Join(dir, HTMLFile)))
	var pngs []string
	for _, p := range written {
		if strings.HasSuffix(p, ".png") {
			pngs = append(pngs, p)
		}
	}
	if len(pngs) == 0 {
		t.Fatal("no plots written")
	}
	// html/template writes '+' in attributes as &#43;, as it may.
	images := regexp.MustCompile(`src="data:image/png;base64,([^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(images) != len(pngs) {
		t.Errorf("report.html embeds %d images, want %d (one per plot)", len(images), len(pngs))
	}
	for _, m := range images {
		b, err := base64.StdEncoding.DecodeString(html.UnescapeString(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(bytes.NewReader(b)); err != nil {
			t.Errorf("embedded image is not a PNG: %v", err)
		}
	}
	for _, bad := range []string{"<script", "<link", `src="http`, `href="http`, "url(http", "ZgotmplZ"} {
		if strings.Contains(page, bad) {
			t.Errorf("report.html contains %q: not self-contained (or a URL was rejected)", bad)
		}
	}
	slo := SLO{Quantile: "p99", Limit: 10 * time.Millisecond}
	for _, v := range Verdict(derived(sum.Cells), &slo) {
		if !strings.Contains(page, template.HTMLEscapeString(v.Answer)) {
			t.Errorf("report.html lacks the verdict's answer %q", v.Answer)
		}
	}
	for _, want := range []string{"Mutual exclusion was violated", "Best client count tried at p99 ≤ 10ms", "2026-11-22 05:01 UTC",
		"zk_ensemble", "127.0.0.1:2181"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

func TestRenderPlots(t *testing.T) {
	t.Parallel()
	dir, written := renderFixture(t, fixtureSummary(), true, RenderOptions{})
	want := []string{"latency-hot", "latency-burst", "throughput", "p99", "p99-vs-throughput", "per-acquire",
		"burst-costs", "timeline-hot", "fairness-hot"}
	for _, name := range want {
		p := filepath.Join(dir, PlotsDir, name+".png")
		if !slices.Contains(written, p) {
			t.Errorf("%s not written", p)
			continue
		}
		img, err := png.Decode(bytes.NewReader(readFile(t, p)))
		if err != nil {
			t.Errorf("%s: %v", p, err)
		} else if b := img.Bounds(); b.Dx() < 800 || b.Dy() < 400 {
			t.Errorf("%s is %v, too small to read", p, b)
		}
		svg := readFile(t, filepath.Join(dir, PlotsDir, name+".svg"))
		if !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("%s.svg is not SVG", name)
		}
	}
	// The bursts run under a second: one interval, no timeline.
	if _, err := os.Stat(filepath.Join(dir, PlotsDir, "timeline-burst.png")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("timeline-burst.png written from single intervals: %v", err)
	}
}

func TestRenderSkipsPlotsWithoutData(t *testing.T) {
	t.Parallel()
	sum := &Summary{Cells: []Cell{fixtureCells()[0]}} // redis, hot, one client: no retries, no bursts
	dir, written := renderFixture(t, sum, false, RenderOptions{})
	// One client count: nothing to draw against clients either.
	for _, name := range []string{"per-acquire", "burst-costs", "timeline-hot", "latency-burst", "throughput", "p99"} {
		if _, err := os.Stat(filepath.Join(dir, PlotsDir, name+".png")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s.png written without data (err %v)", name, err)
		}
	}
	for _, p := range written {
		if strings.HasSuffix(p, result.HgrmExt) {
			t.Errorf("%s written without an .hlog", p)
		}
	}
	page := string(readFile(t, filepath.Join(dir, HTMLFile)))
	if !strings.Contains(page, "no interval log") {
		t.Error("report.html does not say the interval log is missing")
	}
}

func TestRenderTwiceIsIdentical(t *testing.T) {
	t.Parallel()
	dir, written := renderFixture(t, fixtureSummary(), true, RenderOptions{SLO: "p99=10ms"})
	first := map[string][]byte{}
	for _, p := range written {
		first[p] = readFile(t, p)
	}
	if err := Render(dir, RenderOptions{SLO: "p99=10ms"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{MarkdownFile, CSVFile, BenchFile, HTMLFile, "redis_hot_c16" + result.HgrmExt} { // the fixture keeps the flat layout of before
		p := filepath.Join(dir, name)
		if !bytes.Equal(first[p], readFile(t, p)) {
			t.Errorf("%s differs between two renders", name)
		}
	}
}

func TestRenderSLOFromMeta(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFixtureDir(t, dir, fixtureSummary(), false)
	meta := fixtureMeta()
	meta["slo"] = "p999=50ms"
	if err := result.WriteJSON(filepath.Join(dir, result.MetaFile), meta); err != nil {
		t.Fatal(err)
	}
	if err := Render(dir, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if md := string(readFile(t, filepath.Join(dir, MarkdownFile))); !strings.Contains(md, "Best client count tried at p99.9 ≤ 50ms") {
		t.Errorf("summary.md does not plan for meta.json's SLO:\n%s", md)
	}
	if err := Render(dir, RenderOptions{SLO: "p50=1ms"}); err != nil {
		t.Fatal(err)
	}
	if md := string(readFile(t, filepath.Join(dir, MarkdownFile))); !strings.Contains(md, "Best client count tried at p50 ≤ 1ms") {
		t.Errorf("RenderOptions.SLO does not override meta.json's:\n%s", md)
	}
}

func TestRenderErrors(t *testing.T) {
	t.Parallel()
	good := func(t *testing.T) string {
		dir := t.TempDir()
		writeFixtureDir(t, dir, fixtureSummary(), false)
		return dir
	}
	tests := []struct {
		name     string
		dir      func(t *testing.T) string
		opts     RenderOptions
		notFound bool
		is       error
	}{
		{"missing directory", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, RenderOptions{}, true, nil},
		{"no summary.json", func(t *testing.T) string {
			d := good(t)
			os.Remove(filepath.Join(d, result.SummaryFile))
			return d
		}, RenderOptions{}, true, nil},
		{"no meta.json", func(t *testing.T) string {
			d := good(t)
			os.Remove(filepath.Join(d, result.MetaFile))
			return d
		}, RenderOptions{}, true, nil},
		{"bad summary.json", func(t *testing.T) string {
			d := good(t)
			os.WriteFile(filepath.Join(d, result.SummaryFile), []byte(`{"cells": [`), 0o644)
			return d
		}, RenderOptions{}, false, nil},
		{"bad .hlog", func(t *testing.T) string {
			d := good(t)
			os.WriteFile(filepath.Join(d, result.CellFile(fixtureCells()[0])+result.HlogExt), []byte("Tag=acquire,0.0,1.0,1.0,notbase64!\n"), 0o644)
			return d
		}, RenderOptions{}, false, nil},
		{"bad SLO", good, RenderOptions{SLO: "p97=1ms"}, false, result.ErrSLO},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Render(tc.dir(t), tc.opts)
			if err == nil {
				t.Fatal("Render succeeded")
			}
			if errors.Is(err, os.ErrNotExist) != tc.notFound {
				t.Errorf("errors.Is(%v, os.ErrNotExist) = %v, want %v", err, !tc.notFound, tc.notFound)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v does not wrap %v", err, tc.is)
			}
		})
	}
}

func TestRenderEmptySummary(t *testing.T) {
	t.Parallel()
	dir, written := renderFixture(t, &Summary{}, false, RenderOptions{})
	for _, p := range written {
		if strings.Contains(p, PlotsDir) {
			t.Errorf("%s written for a run without cells", p)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, HTMLFile)); err != nil {
		t.Error(err)
	}
}

// report.html links the Safety table written beside it, by the name it
// was written under, and lists it among the files.
func TestRenderHTMLLinksSafety(t *testing.T) {
	t.Parallel()
	dir, written := renderFixture(t, fixtureSummary(), true, RenderOptions{})
	if !slices.Contains(written, filepath.Join(dir, SafetyFile)) {
		t.Fatalf("%s not written: %v", SafetyFile, written)
	}
	if b := readFile(t, filepath.Join(dir, SafetyFile)); !strings.HasPrefix(string(b), "# Safety") {
		t.Fatalf("%s: %q", SafetyFile, b)
	}
	page := string(readFile(t, filepath.Join(dir, HTMLFile)))
	for _, want := range []string{`<a href="` + SafetyFile + `">` + SafetyFile + `</a>`, "<li>" + SafetyFile + "</li>"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
