package report

import (
	"github.com/lockbench/lockbench/result"

	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// DefaultNoise is the relative change below which Compare calls a
// difference noise, when CompareOptions.Noise is zero.
const DefaultNoise = 0.05

// CompareOptions tune Compare.
type CompareOptions struct {
	// Noise is the relative change (0.05 = 5%) below which a difference
	// is run-to-run noise. Default DefaultNoise.
	Noise float64
	// OldLogs and NewLogs, when set, hold each run's interval logs by
	// Cell.Key(). Where both runs have one for a cell with at least three
	// seconds, the noise band widens to twice the standard error of the
	// difference, if that is wider.
	OldLogs, NewLogs map[string]*CellLog
}

// Comparison is two runs side by side.
type Comparison struct {
	Cells []CellDelta
	// OnlyOld and OnlyNew list the keys of cells measured in one run only.
	OnlyOld, OnlyNew []string
}

// CellDelta is how one cell changed.
type CellDelta struct {
	Key     string
	Metrics []MetricDelta
}

// MetricDelta is how one figure of a cell changed.
type MetricDelta struct {
	Name     string // "acq/s", "p50", "p99", "notif/acq"
	Old, New float64
	// Change is (New−Old)/Old; ±Inf when Old is zero and New is not,
	// 0 when both are.
	Change float64
	// Band is the absolute difference that still counts as noise.
	Band float64
	// Noise is true when |New−Old| ≤ Band.
	Noise bool
	// Better says whether the change is an improvement (ignoring noise):
	// more throughput, less latency, fewer notifications.
	Better bool
	// Latency says the values are microseconds.
	Latency bool
}

// Compare matches cells of two runs by Cell.Key() and reports, for each
// cell in both, the change in throughput, p50, p99 and notifications per
// acquisition, marking changes within noise. Cells follow the new run's
// order.
func Compare(old, new []Cell, opts CompareOptions) Comparison {
	noise := opts.Noise
	if noise <= 0 {
		noise = DefaultNoise
	}
	oldBy := map[string]Cell{}
	for _, c := range old {
		oldBy[c.Key()] = c
	}
	newKeys := map[string]bool{}
	var cmp Comparison
	for _, n := range new {
		k := n.Key()
		newKeys[k] = true
		o, ok := oldBy[k]
		if !ok {
			cmp.OnlyNew = append(cmp.OnlyNew, k)
			continue
		}
		so := spreadOf(opts.OldLogs[k])
		sn := spreadOf(opts.NewLogs[k])
		d := CellDelta{Key: k}
		d.Metrics = []MetricDelta{
			metric("acq/s", o.AcquiresPerS, n.AcquiresPerS, true, false, noise, pooled(so.perS, sn.perS)),
			metric("p50", o.AcquireLatencyUs.P50, n.AcquireLatencyUs.P50, false, true, noise, pooled(so.p50, sn.p50)),
			metric("p99", o.AcquireLatencyUs.P99, n.AcquireLatencyUs.P99, false, true, noise, pooled(so.p99, sn.p99)),
			metric("notif/acq", o.NotificationsPerAcquire, n.NotificationsPerAcquire, false, false, noise, 0),
		}
		cmp.Cells = append(cmp.Cells, d)
	}
	for _, o := range old {
		if !newKeys[o.Key()] {
			cmp.OnlyOld = append(cmp.OnlyOld, o.Key())
		}
	}
	return cmp
}

// CompareDirs compares the results in two directories: their summary.json
// and, where both have them, their .hlog files for the noise estimate.
func CompareDirs(oldDir, newDir string, opts CompareOptions) (Comparison, error) {
	old, err := result.ReadSummary(filepath.Join(oldDir, result.SummaryFile))
	if err != nil {
		return Comparison{}, err
	}
	new, err := result.ReadSummary(filepath.Join(newDir, result.SummaryFile))
	if err != nil {
		return Comparison{}, err
	}
	if opts.OldLogs == nil {
		if opts.OldLogs, err = readLogs(oldDir, old.Cells); err != nil {
			return Comparison{}, err
		}
	}
	if opts.NewLogs == nil {
		if opts.NewLogs, err = readLogs(newDir, new.Cells); err != nil {
			return Comparison{}, err
		}
	}
	return Compare(old.Cells, new.Cells, opts), nil
}

func readLogs(dir string, cells []Cell) (map[string]*CellLog, error) {
	logs := map[string]*CellLog{}
	for _, c := range cells {
		l, err := result.ReadCellLog(dir, c)
		if err != nil {
			return nil, err
		}
		if l != nil {
			logs[c.Key()] = l
		}
	}
	return logs, nil
}

// spread is the sample standard deviation of a cell's per-interval
// throughput and quantiles, and how many intervals each rests on.
type spread struct{ perS, p50, p99 sample }

type sample struct {
	sd float64
	n  int
}

func spreadOf(l *CellLog) spread {
	stats := l.IntervalStats(result.TagAcquire)
	var perS, p50, p99 []float64
	for _, s := range stats {
		perS = append(perS, s.PerS)
		if !s.Empty {
			p50 = append(p50, s.P50)
			p99 = append(p99, s.P99)
		}
	}
	return spread{sample{stddev(perS), len(perS)}, sample{stddev(p50), len(p50)}, sample{stddev(p99), len(p99)}}
}

// minIntervals is how many seconds each run needs before its spread says
// anything about noise.
const minIntervals = 3

// pooled is the standard error of the difference between two cells'
// figures: a cell's figure rests on all its seconds, so its uncertainty is
// the per-second spread over √n, not the spread itself. Zero unless both
// runs have enough seconds, since a spread from two points says nothing.
func pooled(a, b sample) float64 {
	if a.n < minIntervals || b.n < minIntervals || a.sd <= 0 || b.sd <= 0 {
		return 0
	}
	return math.Sqrt(a.sd*a.sd/float64(a.n) + b.sd*b.sd/float64(b.n))
}

func metric(name string, old, new float64, higherBetter, latency bool, noise, sd float64) MetricDelta {
	m := MetricDelta{Name: name, Old: old, New: new, Latency: latency}
	diff := new - old
	switch {
	case old != 0:
		m.Change = diff / math.Abs(old)
	case new > 0:
		m.Change = math.Inf(1)
	case new < 0:
		m.Change = math.Inf(-1)
	}
	m.Band = max(noise*math.Abs(old), 2*sd)
	m.Noise = math.Abs(diff) <= m.Band
	m.Better = diff != 0 && (diff > 0) == higherBetter
	return m
}

// Write prints the comparison: a block per cell, one line per figure
// (old → new, change), "~ noise" where the change is within noise.
func (c Comparison) Write(w io.Writer) error {
	type line struct{ name, old, new, change, verdict string }
	var lines []line
	widths := [4]int{}
	for _, d := range c.Cells {
		for _, m := range d.Metrics {
			verdict := "~ noise"
			if !m.Noise {
				verdict = "worse"
				if m.Better {
					verdict = "better"
				}
			}
			l := line{m.Name, m.format(m.Old), m.format(m.New), pct(m.Change), verdict}
			for i, f := range []string{l.name, l.old, l.new, l.change} {
				widths[i] = max(widths[i], utf8.RuneCountInString(f))
			}
			lines = append(lines, l)
		}
	}
	pad := func(s string, n int, left bool) string {
		fill := strings.Repeat(" ", max(0, n-utf8.RuneCountInString(s)))
		if left {
			return s + fill
		}
		return fill + s
	}
	var b strings.Builder
	i := 0
	for _, d := range c.Cells {
		b.WriteString(d.Key + "\n")
		for range d.Metrics {
			l := lines[i]
			i++
			fmt.Fprintf(&b, "  %s  %s → %s  %s  %s\n", pad(l.name, widths[0], true), pad(l.old, widths[1], false),
				pad(l.new, widths[2], true), pad(l.change, widths[3], false), l.verdict)
		}
	}
	if len(c.OnlyOld) > 0 {
		fmt.Fprintf(&b, "only in old: %s\n", strings.Join(c.OnlyOld, ", "))
	}
	if len(c.OnlyNew) > 0 {
		fmt.Fprintf(&b, "only in new: %s\n", strings.Join(c.OnlyNew, ", "))
	}
	if len(c.Cells) == 0 {
		b.WriteString("no cells in common\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (m MetricDelta) format(v float64) string {
	switch {
	case m.Latency:
		return result.Dur(v)
	case m.Name == "acq/s":
		return commas(round(v))
	}
	return perAcq(v)
}

func pct(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "new"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return fmt.Sprintf("%+.1f%%", 100*x)
}

// stddev is the sample standard deviation of xs; 0 for fewer than two.
func stddev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}
