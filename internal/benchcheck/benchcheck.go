// Package benchcheck compares two `go test -bench` outputs and says which
// metrics regressed past a threshold: the gate a CI job runs after
// `go test -run '^$' -bench . -count 10`.
package benchcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/lockbench/lockbench/internal/ranktest"
)

// MinSamples is the number of runs per side from which a regression must
// also be significant: benchstat's Mann-Whitney U-test at α = 0.05, so one
// noisy run cannot fail a CI job. With fewer runs, the threshold alone
// decides.
const MinSamples = ranktest.MinRounds

// Limit is the largest tolerated relative increase of one unit's median,
// e.g. {Unit: "p99-ns", Max: 0.25}. For units where more is better
// (acquires/s), set Lower: a decrease past Max regresses.
type Limit struct {
	Unit  string
	Max   float64
	Lower bool
}

// DefaultLimits gate what lockbench's benchmarks exist to protect: the tail
// and the notification count.
var DefaultLimits = []Limit{{Unit: "p99-ns", Max: 0.25}, {Unit: "notifications/op", Max: 0.10}}

// ParseLimit reads "p99-ns=25%" or "notifications/op=0.1"; a leading
// "-" on the value ("acquires/s=-10%") means lower is the regression.
func ParseLimit(s string) (Limit, error) {
	unit, v, ok := strings.Cut(s, "=")
	if !ok || unit == "" || v == "" {
		return Limit{}, fmt.Errorf("limit %q: want UNIT=PERCENT, e.g. p99-ns=25%%", s)
	}
	l := Limit{Unit: unit}
	if strings.HasPrefix(v, "-") {
		l.Lower, v = true, v[1:]
	}
	v = strings.TrimPrefix(v, "+")
	scale := 1.0
	if strings.HasSuffix(v, "%") {
		scale, v = 0.01, strings.TrimSuffix(v, "%")
	}
	f, err := strconv.ParseFloat(v, 64)
	// NaN and ±Inf parse, but a limit of either never trips: the gate
	// would pass everything.
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return Limit{}, fmt.Errorf("limit %q: %q is not a finite non-negative number", s, v)
	}
	l.Max = f * scale
	return l, nil
}

// Row is one benchmark × unit compared.
type Row struct {
	Bench             string
	Unit              string
	Old, New          float64 // medians
	OldN, NewN        int     // runs
	Change            float64 // (new−old)/old; +Inf when old is 0 and new is not
	P                 float64 // U-test p-value; 1 when not tested
	Tested            bool    // both sides had MinSamples runs
	Limit             Limit
	Regressed         bool
	MissingInOldOrNew bool // in NEW only: no baseline yet (Old is 0)
	// Gone: in OLD, not in NEW — this gated unit of the benchmark, or
	// with Unit "" the whole benchmark, disappeared (renamed, skipped,
	// crashed).
	Gone bool
}

// ErrFailed is wrapped by Read's error when the input records a failure:
// a `--- FAIL:` or `FAIL` line from go test.
var ErrFailed = errors.New("go test reported FAIL")

// Read parses benchmark results into their values by benchmark name (the
// -GOMAXPROCS suffix dropped) and unit. Output that records a failure — a
// benchmark's `--- FAIL:`, a package's `FAIL` — is an error wrapping
// ErrFailed that names what failed: its numbers are not a measurement to
// compare. A benchmark that was skipped (0 iterations) is left out.
func Read(r io.Reader, name string) (map[string]map[string][]float64, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := failures(data, name); err != nil {
		return nil, err
	}
	if err := partial(data, name); err != nil {
		return nil, err
	}
	out := map[string]map[string][]float64{}
	br := benchfmt.NewReader(bytes.NewReader(data), name)
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, rec
		case *benchfmt.Result:
			if rec.Iters == 0 {
				// go test prints a benchmark that called b.Skip as
				// "BenchmarkX-2  0  NaN ns/op": nothing was measured.
				continue
			}
			bench := "Benchmark" + string(rec.Name.Full())
			if i := strings.LastIndexByte(bench, '-'); i > 0 {
				if _, err := strconv.Atoi(bench[i+1:]); err == nil {
					bench = bench[:i]
				}
			}
			if out[bench] == nil {
				out[bench] = map[string][]float64{}
			}
			for _, v := range rec.Values {
				// The reader tidies units (p99-ns → p99-sec); limits name
				// them as the benchmark printed them.
				unit, val := v.Unit, v.Value
				if v.OrigUnit != "" {
					unit, val = v.OrigUnit, v.OrigValue
				}
				if math.IsNaN(val) {
					// NaN is a figure the benchmark reports as unknown on
					// this machine (the servers' CPU where their processes
					// cannot be seen), so that every machine prints the same
					// metrics: it is not a measurement, and a unit known in
					// the old run and unknown in the new one is missing there.
					continue
				}
				if math.IsInf(val, 0) {
					return nil, fmt.Errorf("%s: %s: %s is %v, not a measurement", name, bench, unit, val)
				}
				out[bench][unit] = append(out[bench][unit], val)
			}
		}
	}
	if err := br.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New(name + ": no benchmark results")
	}
	return out, nil
}

// ErrPartial is wrapped by Read's error for the bench.txt of a partial
// lockbench result (a merge given --partial, a run that ended early): its
// missing cells would read as benchmarks gone, or pass unjudged.
var ErrPartial = errors.New("partial results")

// partialKey opens the configuration line lockbench's report writes into
// the bench.txt of a partial result.
const partialKey = "lockbench-partial:"

// partial returns an error naming the file and quoting its partial line,
// or nil.
func partial(data []byte, name string) error {
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, partialKey) {
			return fmt.Errorf("%w: %s: %s", ErrPartial, name, strings.TrimSpace(strings.TrimPrefix(line, partialKey)))
		}
	}
	return nil
}

// failures returns an error naming what go test reported as failed in
// data, or nil. It knows go test's own lines: "--- FAIL: BenchmarkX/sub"
// (indented for a sub-benchmark), "FAIL" alone, and "FAIL\tpkg\t1.2s" or
// "FAIL\tpkg [build failed]".
func failures(data []byte, name string) error {
	var benches, pkgs []string
	firstLine := 0
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimLeft(line, " \t")
		switch {
		case strings.HasPrefix(trimmed, "--- FAIL: "):
			f := strings.Fields(strings.TrimPrefix(trimmed, "--- FAIL: "))
			if len(f) > 0 && !slices.Contains(benches, f[0]) {
				benches = append(benches, f[0])
			}
		case line == "FAIL":
		case strings.HasPrefix(line, "FAIL\t") || strings.HasPrefix(line, "FAIL "):
			pkg, _, _ := strings.Cut(strings.TrimSpace(line[len("FAIL"):]), "\t")
			if pkg = strings.TrimSpace(pkg); pkg != "" && !slices.Contains(pkgs, pkg) {
				pkgs = append(pkgs, pkg)
			}
		default:
			continue
		}
		if firstLine == 0 {
			firstLine = i + 1
		}
	}
	if firstLine == 0 {
		return nil
	}
	// Name the failed sub-benchmark, not also each parent that failed
	// because of it.
	var named []string
	for _, b := range benches {
		if !slices.ContainsFunc(benches, func(c string) bool { return strings.HasPrefix(c, b+"/") }) {
			named = append(named, b)
		}
	}
	for _, p := range pkgs {
		named = append(named, "package "+p)
	}
	if len(named) == 0 {
		return fmt.Errorf("%s: %w (line %d)", name, ErrFailed, firstLine)
	}
	return fmt.Errorf("%s: %w: %s", name, ErrFailed, strings.Join(named, ", "))
}

// Units lists, sorted, every unit some benchmark of runs reported.
func Units(runs ...map[string]map[string][]float64) []string {
	var units []string
	for _, run := range runs {
		for _, b := range run {
			for u := range b {
				if !slices.Contains(units, u) {
					units = append(units, u)
				}
			}
		}
	}
	slices.Sort(units)
	return units
}

// Compare checks every benchmark present in both runs against limits. A
// benchmark only in cur gets MissingInOldOrNew rows; one only in old, or a
// gated unit old had and cur lacks, gets Gone rows.
func Compare(old, cur map[string]map[string][]float64, limits []Limit) []Row {
	var rows []Row
	names := make([]string, 0, len(cur))
	for n := range cur {
		names = append(names, n)
	}
	for n := range old {
		if _, ok := cur[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		if _, ok := cur[n]; !ok {
			rows = append(rows, Row{Bench: n, Gone: true})
			continue
		}
		for _, l := range limits {
			nv, ok := cur[n][l.Unit]
			if !ok {
				if ov, ok := old[n][l.Unit]; ok {
					rows = append(rows, Row{Bench: n, Unit: l.Unit, Limit: l, Old: median(ov), OldN: len(ov), Gone: true})
				}
				continue
			}
			row := Row{Bench: n, Unit: l.Unit, Limit: l, New: median(nv), NewN: len(nv)}
			ov, ok := old[n][l.Unit]
			if !ok {
				row.MissingInOldOrNew = true
				rows = append(rows, row)
				continue
			}
			row.Old, row.OldN = median(ov), len(ov)
			switch {
			case row.Old == row.New:
				row.Change = 0
			case row.Old == 0:
				row.Change = math.Inf(1)
			default:
				row.Change = (row.New - row.Old) / row.Old
			}
			past := row.Change > l.Max
			if l.Lower {
				past = -row.Change > l.Max
			}
			row.P = 1
			if len(ov) >= MinSamples && len(nv) >= MinSamples {
				c := ranktest.Test(ov, nv)
				row.P, row.Tested = c.P, true
				past = past && c.Significant
			}
			row.Regressed = past
			rows = append(rows, row)
		}
	}
	return rows
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Gone lists what the rows say disappeared from the new run: "BenchmarkX"
// for a whole benchmark, "BenchmarkX (unit)" for a gated unit it no longer
// reports.
func Gone(rows []Row) []string {
	var gone []string
	for _, r := range rows {
		if !r.Gone {
			continue
		}
		if r.Unit == "" {
			gone = append(gone, r.Bench)
		} else {
			gone = append(gone, r.Bench+" ("+r.Unit+")")
		}
	}
	return gone
}

// Write prints rows as a table and returns how many regressed (Gone rows
// are not counted: see Gone).
func Write(w io.Writer, rows []Row) int {
	bad := 0
	fmt.Fprintf(w, "%-60s %-18s %14s %14s %17s  %s\n", "benchmark", "unit", "old", "new", "change", "verdict")
	for _, r := range rows {
		verdict := "ok"
		oldS, newS, unit := num(r.Old), num(r.New), r.Unit
		switch {
		case r.Gone:
			verdict, newS = "MISSING in new", "-"
			if unit == "" {
				unit, oldS = "-", "-" // the whole benchmark
			}
		case r.MissingInOldOrNew:
			verdict, oldS = "new (no baseline)", "-"
		case r.Regressed:
			verdict = fmt.Sprintf("REGRESSED (limit %s%.0f%%)", map[bool]string{true: "-", false: "+"}[r.Limit.Lower], r.Limit.Max*100)
			bad++
		}
		change := fmt.Sprintf("%+.1f%%", r.Change*100)
		if r.Tested {
			change += fmt.Sprintf(" p=%.3f", r.P)
		}
		if math.IsInf(r.Change, 1) {
			change = "+∞"
		}
		if r.MissingInOldOrNew || r.Gone {
			change = "-"
		}
		fmt.Fprintf(w, "%-60s %-18s %14s %14s %17s  %s\n", r.Bench, unit, oldS, newS, change, verdict)
	}
	return bad
}

// num prints whole numbers in full (latencies in ns, rates) and fractions
// with four significant digits.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
