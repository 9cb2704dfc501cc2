package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lockbench/lockbench/internal/ranktest"
	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// CompareOptions tune Compare.
type CompareOptions struct {
	// Noise is the relative change (0.05 = 5%) below which a difference
	// is run-to-run noise. Default judge.DefaultNoise.
	Noise float64
	// OldLogs and NewLogs, when set, hold each run's interval logs by
	// Cell.Key(). Where both runs have one for a cell with at least three
	// seconds, the noise band widens to twice the standard error of the
	// difference, if that is wider.
	OldLogs, NewLogs map[string]*CellLog
}

// Comparison is two runs side by side. Its JSON form is what
// `lockbench compare --format json` prints.
type Comparison struct {
	Cells []CellDelta `json:"cells"`
	// OnlyOld and OnlyNew list the keys of cells measured in one run only.
	OnlyOld []string `json:"only_old,omitempty"`
	OnlyNew []string `json:"only_new,omitempty"`
	// Warnings name each way the two runs were not set up alike (plan,
	// implementations, client counts, server versions, machine): their
	// differences may be the set-up's, not the code's. Set by CompareDirs.
	Warnings []string `json:"warnings,omitempty"`
	// Regressions name each figure that got worse by more than noise, as
	// "cell: metric old → new (change)".
	Regressions []string `json:"regressions"`
	// Untested lists the cells whose timed figures could not be tested
	// (fewer than result.MinTestRounds rounds on a side): for them the
	// threshold alone decided.
	Untested []string `json:"untested,omitempty"`
}

// CellDelta is how one cell changed.
type CellDelta struct {
	Key     string        `json:"cell"`
	Metrics []MetricDelta `json:"metrics"`
}

// MetricDelta is how one figure of a cell changed.
type MetricDelta struct {
	Name string  `json:"metric"` // "acq/s", "p50", "p99", "notif/acq"
	Old  float64 `json:"old"`
	New  float64 `json:"new"`
	// Change is (New−Old)/Old; ±Inf when Old is zero and New is not,
	// 0 when both are. JSON has no infinity: it is written as null there.
	Change float64 `json:"-"`
	// Band is the absolute difference that still counts as noise.
	Band float64 `json:"band"`
	// Noise is true when |New−Old| ≤ Band.
	Noise bool `json:"noise"`
	// Better says whether the change is an improvement (ignoring noise):
	// more throughput, less latency, fewer notifications.
	Better bool `json:"better"`
	// Latency says the values are microseconds.
	Latency bool `json:"latency_us"`
	// Tested says both runs measured the figure in MinTestRounds rounds
	// or more, so that benchstat's rank test (ranktest.Test) decided: Noise
	// is then "no significant difference, or one within the threshold".
	// P is the test's p-value; Old and New are the rounds' estimates.
	Tested bool    `json:"tested"`
	P      float64 `json:"p,omitempty"`
}

// MarshalJSON writes the delta with its change (null when infinite) and
// its verdict.
func (m MetricDelta) MarshalJSON() ([]byte, error) {
	type plain MetricDelta
	var change *float64
	if !math.IsInf(m.Change, 0) && !math.IsNaN(m.Change) {
		change = &m.Change
	}
	return json.Marshal(struct {
		plain
		Change  *float64 `json:"change"`
		Verdict string   `json:"verdict"`
	}{plain(m), change, m.Verdict()})
}

// Verdict is "~ noise", "better" or "worse"; a tested figure says its
// p-value ("~ (p=0.31)", benchstat's "~" for no significant difference).
func (m MetricDelta) Verdict() string {
	switch {
	case m.Tested && m.Noise:
		return fmt.Sprintf("~ (p=%.2g)", m.P)
	case m.Tested && m.Better:
		return fmt.Sprintf("better (p=%.2g)", m.P)
	case m.Tested:
		return fmt.Sprintf("worse (p=%.2g)", m.P)
	case m.Noise:
		return "~ noise"
	case m.Better:
		return "better"
	}
	return "worse"
}

// Regressed reports whether judge found the figure worse by more than
// noise.
func (m MetricDelta) Regressed() bool {
	return m.New != m.Old && judge.Change{Band: m.Band, Noise: m.Noise, Better: m.Better}.Regressed()
}

// Compare matches cells of two runs by Cell.Key() and reports, for each
// cell in both, the change in throughput, p50, p99 and notifications per
// acquisition, marking changes within noise. Cells follow the new run's
// order.
func Compare(old, new []Cell, opts CompareOptions) Comparison {
	noise := opts.Noise
	if noise <= 0 {
		noise = judge.DefaultNoise
	}
	oldBy := map[string]Cell{}
	for _, c := range old {
		oldBy[c.Key()] = c
	}
	newKeys := map[string]bool{}
	cmp := Comparison{Regressions: []string{}}
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
		if testRounds(d.Metrics[:3], o.Rounds, n.Rounds, noise) == 0 {
			cmp.Untested = append(cmp.Untested, k)
		}
		d.Metrics = append(d.Metrics, handoffMetrics(o, n, noise)...)
		cmp.Cells = append(cmp.Cells, d)
		for _, m := range d.Metrics {
			if m.Regressed() {
				cmp.Regressions = append(cmp.Regressions, fmt.Sprintf("%s: %s %s → %s (%s)", k, m.Name, m.format(m.Old), m.format(m.New), pct(m.Change)))
			}
		}
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
	for _, d := range []struct {
		dir string
		sum *result.Summary
	}{{oldDir, old}, {newDir, new}} {
		if p := d.sum.Partial; p != nil {
			return Comparison{}, fmt.Errorf("%s: %w: %s", d.dir, ErrPartial, p.Label())
		}
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
	cmp := Compare(old.Cells, new.Cells, opts)
	oldMeta, oerr := result.ReadMeta(filepath.Join(oldDir, result.MetaFile))
	newMeta, nerr := result.ReadMeta(filepath.Join(newDir, result.MetaFile))
	switch {
	case oerr != nil || nerr != nil:
		cmp.Warnings = append(cmp.Warnings, "no meta.json to compare set-ups: "+oneLineErr(errors.Join(oerr, nerr)))
	default:
		cmp.Warnings = MetaDifferences(oldMeta, newMeta)
		for _, d := range []struct {
			dir  string
			meta result.Meta
			sum  *result.Summary
		}{{oldDir, oldMeta, old}, {newDir, newMeta, new}} {
			if p := result.MissingFromRun(d.dir, d.meta, d.sum); p != nil {
				cmp.Warnings = append(cmp.Warnings, d.dir+" is incomplete — "+p.Label())
			}
		}
	}
	return cmp, nil
}

// ErrPartial is wrapped by CompareDirs's error for the results of a merge
// given --partial: a run missing shards' cells is no baseline, nor a change
// to judge against one. Its text reaches the user's one line as it is,
// after the command's name, so it names no package.
var ErrPartial = errors.New("partial results (merge --partial) cannot be compared")

func oneLineErr(err error) string {
	first, _, _ := strings.Cut(err.Error(), "\n")
	return first
}

// MetaDifferences names each way two runs' meta.json differ that may
// explain a difference in their figures, one line each: the plan (any
// setting), implementations, client counts, server versions and machine.
// What changes from run to run by design — the start time, the sandbox's
// addresses — is left out.
func MetaDifferences(old, new result.Meta) []string {
	group := func(key string) string {
		switch {
		case key == "impls":
			return "implementations"
		case key == "clients":
			return "client counts"
		case strings.HasPrefix(key, "host.") || key == "go_version" || key == "lockbench_version":
			return "machine"
		case key == "started" || key == "servers" || strings.HasPrefix(key, "servers.") ||
			key == "sandboxed" || strings.HasPrefix(key, "server_versions."),
			// measured, not set: a merged run's shards (their clock skew
			// above all) are compared by count below, the hash last
			key == "shards" || strings.HasPrefix(key, "shard.skew."), key == "plan_hash",
			// measured before the cells, not set: the disk (said below
			// when it moved by more than 2×) and the servers' warm-up
			strings.HasPrefix(key, "disk_fdatasync"), strings.HasPrefix(key, "server_warmup"):
			return ""
		}
		return "plan"
	}
	oldF, newF := fieldMap(old.Fields), fieldMap(new.Fields)
	keys := map[string]bool{}
	for k := range oldF {
		keys[k] = true
	}
	for k := range newF {
		keys[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		g := group(k)
		if g == "" || oldF[k] == newF[k] {
			continue
		}
		if base := strings.TrimSuffix(k, "_s"); base != k && (oldF[base] != "" || newF[base] != "") {
			continue // hold_s beside hold: the same setting in seconds
		}
		verb := "differ"
		if g == "plan" || g == "machine" {
			verb = "differs"
		}
		out = append(out, fmt.Sprintf("%s %s: %s %s → %s", g, verb, k, orNone(oldF[k]), orNone(newF[k])))
	}
	if len(old.Shards) != len(new.Shards) {
		out = append(out, fmt.Sprintf("plan differs: shards %d → %d", len(old.Shards), len(new.Shards)))
	}
	// The hash only says that the plans differ: worth a line when no
	// setting named above says how.
	if old.PlanHash != new.PlanHash && !slices.ContainsFunc(out, func(l string) bool {
		return strings.HasPrefix(l, "plan ") || strings.HasPrefix(l, "implementations ") || strings.HasPrefix(l, "client counts ")
	}) {
		out = append(out, fmt.Sprintf("plan differs: plan_hash %s → %s", orNone(old.PlanHash), orNone(new.PlanHash)))
	}
	if o, n := old.DiskSync, new.DiskSync; o != nil && n != nil && o.P99Ms > 0 && n.P99Ms > 0 &&
		(n.P99Ms > 2*o.P99Ms || o.P99Ms > 2*n.P99Ms) {
		out = append(out, fmt.Sprintf("disk differs: fdatasync p99 %s → %s", result.Dur(1000*o.P99Ms), result.Dur(1000*n.P99Ms)))
	}
	if o, n := serverVersions(old), serverVersions(new); o != n {
		out = append(out, fmt.Sprintf("server versions differ: %s → %s", orNone(o), orNone(n)))
	}
	return out
}

func fieldMap(fs []result.Field) map[string]string {
	m := map[string]string{}
	for _, f := range fs {
		m[f.Key] = f.Value
	}
	return m
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// serverVersions lists the distinct versions per server kind, without the
// addresses (a sandbox's ports differ on every run): "redis 7.0.15; zk 3.8.0".
func serverVersions(m result.Meta) string {
	byKind := map[string][]string{}
	for key, v := range m.ServerVersions {
		kind, _, _ := strings.Cut(key, " ")
		if !slices.Contains(byKind[kind], v) {
			byKind[kind] = append(byKind[kind], v)
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(byKind)) {
		slices.Sort(byKind[k])
		parts = append(parts, k+" "+strings.Join(byKind[k], ","))
	}
	return strings.Join(parts, "; ")
}

func readLogs(dir string, cells []Cell) (map[string]*CellLog, error) {
	logs := map[string]*CellLog{}
	for _, c := range cells {
		l, err := hlog.ReadCell(dir, c)
		if err != nil {
			return nil, err
		}
		if l != nil {
			logs[c.Key()] = l
		}
	}
	return logs, nil
}

// spread is the spread of a cell's per-interval throughput and
// quantiles, and how many intervals' worth each rests on.
type spread struct{ perS, p50, p99 sample }

// sample is a weighted standard deviation and its effective number of
// intervals, (Σw)²/Σw²: a run of whole intervals counts each as one, a
// short last interval as the share of one it lasted.
type sample struct {
	sd, n float64
}

// spreadOf weighs each interval by its actual length: a cell's last
// interval is cut where the cell ended, and counting its rate or quantiles
// as much as a whole second's would widen the noise band with what is only
// the cut.
func spreadOf(l *CellLog) spread {
	var perS, p50, p99, w, wq []float64
	for _, s := range l.IntervalSamples(result.TagAcquire) {
		perS = append(perS, s.PerS)
		w = append(w, s.LengthS)
		if !s.Empty {
			p50 = append(p50, s.P50)
			p99 = append(p99, s.P99)
			wq = append(wq, s.LengthS)
		}
	}
	return spread{weighted(perS, w), weighted(p50, wq), weighted(p99, wq)}
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
	return math.Sqrt(a.sd*a.sd/a.n + b.sd*b.sd/b.n)
}

// weighted is the standard deviation of xs weighted by ws (reliability
// weights, unbiased) and the effective number of samples; with equal
// weights it is the sample standard deviation and len(xs).
func weighted(xs, ws []float64) sample {
	var sw, sw2, swx float64
	for i, x := range xs {
		sw += ws[i]
		sw2 += ws[i] * ws[i]
		swx += ws[i] * x
	}
	if len(xs) < 2 || sw <= 0 {
		return sample{n: float64(len(xs))}
	}
	mean := swx / sw
	var ss float64
	for i, x := range xs {
		ss += ws[i] * (x - mean) * (x - mean)
	}
	denom := sw - sw2/sw
	if denom <= 0 {
		return sample{n: 1}
	}
	return sample{sd: math.Sqrt(ss / denom), n: sw * sw / sw2}
}

// testRounds decides acq/s, p50 and p99 (ms, in that order) by
// benchstat's rank test on the two runs' rounds, where both have
// result.MinTestRounds or more: a figure is then noise unless the test
// finds a significant difference and it is beyond the threshold too. It
// returns how many figures it tested.
func testRounds(ms []MetricDelta, old, new *result.RoundFigures, noise float64) int {
	if old == nil || new == nil {
		return 0
	}
	ests := func(r *result.RoundFigures) []result.Estimate { return []result.Estimate{r.AcquiresPerS, r.P50, r.P99} }
	oe, ne := ests(old), ests(new)
	n := 0
	for i := range ms {
		t := ranktest.Test(oe[i].Rounds, ne[i].Rounds)
		if !t.Tested {
			continue
		}
		n++
		m := metric(ms[i].Name, oe[i].Point, ne[i].Point, i == 0, ms[i].Latency, noise, 0)
		m.Tested, m.P = true, t.P
		m.Noise = m.Noise || !t.Significant
		ms[i] = m
	}
	return n
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
	j := judge.JudgeChange(old, new, higherBetter, noise, sd)
	m.Band, m.Noise, m.Better = j.Band, j.Noise, j.Better
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
			l := line{m.Name, m.format(m.Old), m.format(m.New), pct(m.Change), m.Verdict()}
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
	if len(c.Untested) > 0 {
		fmt.Fprintf(&b, "cannot test %d of %d cells (fewer than %d rounds a side: run both with --repeat %d or more); the threshold alone decided there: %s\n",
			len(c.Untested), len(c.Cells), result.MinTestRounds, result.MinTestRounds, strings.Join(c.Untested, ", "))
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

// WriteCSV prints the comparison as CSV: a row per cell and figure, with
// the change as a fraction (blank when the old value was zero).
func (c Comparison) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"cell", "metric", "old", "new", "change", "band", "verdict"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, d := range c.Cells {
		for _, m := range d.Metrics {
			change := ""
			if !math.IsInf(m.Change, 0) {
				change = f(m.Change)
			}
			cw.Write([]string{d.Key, m.Name, f(m.Old), f(m.New), change, f(m.Band), m.Verdict()})
		}
	}
	cw.Flush()
	return cw.Error()
}

// handoffMetrics compares two bursts' costs per hand-off: wake-ups, and
// the servers' CPU time where both runs measured it.
func handoffMetrics(o, n Cell, noise float64) []MetricDelta {
	ho, ok1 := result.HandoffCosts(o)
	hn, ok2 := result.HandoffCosts(n)
	if !ok1 || !ok2 {
		return nil
	}
	out := []MetricDelta{metric("wake-ups/hand-off", ho.Wakeups, hn.Wakeups, false, false, noise, 0)}
	// Server CPU per hand-off moves from burst to burst by more than the
	// default noise: it is judged only where both runs repeated their
	// bursts, by the standard error of the difference of their repeats.
	so, sn := weighted(o.RepeatServerCPUUs, ones(len(o.RepeatServerCPUUs))), weighted(n.RepeatServerCPUUs, ones(len(n.RepeatServerCPUUs)))
	if ho.ServerCPUUs != nil && hn.ServerCPUUs != nil && so.n >= 2 && sn.n >= 2 {
		se := math.Sqrt(so.sd*so.sd/so.n + sn.sd*sn.sd/sn.n)
		out = append(out, metric("server CPU/hand-off", *ho.ServerCPUUs, *hn.ServerCPUUs, false, true, noise, se))
	}
	return out
}

func ones(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}
