// Package benchcheck compares two `go test -bench` outputs and says which
// metrics regressed past a threshold: the gate a CI job runs after
// `go test -run '^$' -bench . -count 10`.
package benchcheck

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// MinSamples is the number of runs per side from which a regression must
// also be significant: benchstat's Mann-Whitney U-test at α = 0.05, so one
// noisy run cannot fail a CI job. With fewer runs, the threshold alone
// decides.
const MinSamples = 4

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
	if err != nil || f < 0 {
		return Limit{}, fmt.Errorf("limit %q: %q is not a non-negative number", s, v)
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
	MissingInOldOrNew bool
}

// Read parses benchmark results into median values by benchmark name (the
// -GOMAXPROCS suffix dropped) and unit.
func Read(r io.Reader, name string) (map[string]map[string][]float64, error) {
	out := map[string]map[string][]float64{}
	br := benchfmt.NewReader(r, name)
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, rec
		case *benchfmt.Result:
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

// Compare checks every benchmark present in both runs against limits.
func Compare(old, cur map[string]map[string][]float64, limits []Limit) []Row {
	var rows []Row
	names := make([]string, 0, len(cur))
	for n := range cur {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		for _, l := range limits {
			nv, ok := cur[n][l.Unit]
			if !ok {
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
				c := benchmath.AssumeNothing.Compare(
					benchmath.NewSample(ov, &benchmath.DefaultThresholds),
					benchmath.NewSample(nv, &benchmath.DefaultThresholds))
				row.P, row.Tested = c.P, true
				past = past && c.P < c.Alpha
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

// Write prints rows as a table and returns how many regressed.
func Write(w io.Writer, rows []Row) int {
	bad := 0
	fmt.Fprintf(w, "%-60s %-18s %14s %14s %17s  %s\n", "benchmark", "unit", "old", "new", "change", "verdict")
	for _, r := range rows {
		verdict := "ok"
		switch {
		case r.MissingInOldOrNew:
			verdict = "new (no baseline)"
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
		if r.MissingInOldOrNew {
			change = "-"
		}
		fmt.Fprintf(w, "%-60s %-18s %14s %14s %17s  %s\n", r.Bench, r.Unit, num(r.Old), num(r.New), change, verdict)
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
