package result

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrSLO is what ParseSLO's errors are (errors.Is).
var ErrSLO = errors.New("result: bad SLO")

// sloError is a ParseSLO error: one line naming the threshold at fault
// and what would be read, for a flag's message to carry as it is.
type sloError struct{ msg string }

func (e *sloError) Error() string        { return "bad SLO " + e.msg }
func (e *sloError) Is(target error) bool { return target == ErrSLO }

// SLO is a service-level objective as k6 has thresholds: a list of
// conditions every load cell must meet, e.g. p99<=5ms,errors<=0.1%.
// Quantile and Limit are its first latency threshold, the one capacity is
// planned on (the Quantile of acquire latency at or below Limit); the other
// thresholds are kept in their canonical text so that an SLO stays a
// comparable value.
type SLO struct {
	Quantile string // p50, p90, p95, p99, p999, p9999 or max
	Limit    time.Duration
	others   string // the other thresholds, canonical, comma-separated
}

// Threshold is one condition of an SLO on one figure of a cell.
type Threshold struct {
	// Metric is a latency quantile (p50 … p9999, max, mean), "errors" or
	// "acq/s".
	Metric string
	// Op is "<=" or "<" (latency, errors), ">=" or ">" (acq/s).
	Op string
	// Limit is in the metric's unit: µs for latency, a share of attempts
	// for errors given in percent (Share), a count of errors otherwise,
	// acquisitions per second for acq/s.
	Limit float64
	Share bool
}

// MaxLatencyLimit bounds a latency threshold's limit: a day is loose
// enough for any check (the README's loose one is max<=1h), and beyond
// about a hundred days a limit in nanoseconds no longer survives its
// float in microseconds (the largest duration came back negative).
const MaxLatencyLimit = 24 * time.Hour

// latencyMetrics are the quantiles a threshold may name, as ParseSLO
// spells them after normalising (p99.9 → p999).
var latencyMetrics = []string{"p50", "p90", "p95", "p99", "p999", "p9999", "max", "mean"}

// String gives the SLO back in the form ParseSLO reads.
func (s SLO) String() string {
	t := Threshold{Metric: s.Quantile, Op: "<=", Limit: float64(s.Limit) / float64(time.Microsecond)}
	if s.others == "" {
		return t.String()
	}
	return t.String() + "," + s.others
}

// Of returns the SLO's quantile of l, in microseconds.
func (s SLO) Of(l Latency) float64 { return quantileOf(s.Quantile, l) }

func quantileOf(q string, l Latency) float64 {
	switch q {
	case "p50":
		return l.P50
	case "p90":
		return l.P90
	case "p95":
		return l.P95
	case "p99":
		return l.P99
	case "p999":
		return l.P999
	case "p9999":
		return l.P9999
	case "mean":
		return l.Mean
	}
	return l.Max
}

// Label names the quantile for people: p99.9 rather than p999.
func (s SLO) Label() string { return metricLabel(s.Quantile) }

func metricLabel(q string) string {
	switch q {
	case "p999":
		return "p99.9"
	case "p9999":
		return "p99.99"
	}
	return q
}

// Thresholds lists every condition of the SLO, the capacity one first.
func (s SLO) Thresholds() []Threshold {
	out := []Threshold{{Metric: s.Quantile, Op: "<=", Limit: float64(s.Limit) / float64(time.Microsecond)}}
	if s.others != "" {
		for _, part := range strings.Split(s.others, ",") {
			t, err := parseThreshold(part)
			if err != nil {
				// Only ParseSLO writes others, and it refuses a threshold
				// whose text does not read back: this is a bug, and
				// dropping the threshold would pass cells it should fail.
				panic(fmt.Sprintf("result: SLO threshold %q does not re-parse: %v", part, err))
			}
			out = append(out, t)
		}
	}
	return out
}

// String gives the threshold in the form ParseSLO reads: p99<=5ms,
// errors<=0.1%, acq/s>=1000.
func (t Threshold) String() string {
	switch {
	case t.Metric == "errors" && t.Share:
		return "errors" + t.Op + strconv.FormatFloat(100*t.Limit, 'g', -1, 64) + "%"
	case t.Metric == "errors" || t.Metric == "acq/s":
		return t.Metric + t.Op + strconv.FormatFloat(t.Limit, 'f', -1, 64) // 1000000000, not 1e+09
	}
	// Rounded, not truncated: 1001ns is 1.001µs, which times 1000 falls a
	// hair short of 1001 and read back as 1µs.
	return metricLabel(t.Metric) + t.Op + time.Duration(math.Round(t.Limit*float64(time.Microsecond))).String()
}

// Value is the cell's figure the threshold is on, in its unit.
func (t Threshold) Value(c Cell) float64 {
	switch t.Metric {
	case "errors":
		if !t.Share {
			return float64(c.Errors)
		}
		if n := c.Acquires + c.Errors; n > 0 {
			return float64(c.Errors) / float64(n)
		}
		return 0
	case "acq/s":
		return c.AcquiresPerS
	}
	return quantileOf(t.Metric, c.AcquireLatencyUs)
}

// Met reports whether c meets the threshold. A latency threshold is not
// met by a cell without acquisitions: it has no latency to stand on.
func (t Threshold) Met(c Cell) bool {
	v := t.Value(c)
	if t.latency() && (c.Acquires == 0 || v == 0) {
		return false // no latency, or a summary from before this quantile was kept
	}
	switch t.Op {
	case "<":
		return v < t.Limit
	case ">=":
		return v >= t.Limit
	case ">":
		return v > t.Limit
	}
	return v <= t.Limit
}

func (t Threshold) latency() bool { return t.Metric != "errors" && t.Metric != "acq/s" }

// Format writes a value of the threshold's metric for people.
func (t Threshold) Format(v float64) string {
	switch {
	case t.Metric == "errors" && t.Share:
		return strconv.FormatFloat(100*v, 'g', 3, 64) + "%"
	case t.Metric == "errors":
		return strconv.FormatFloat(v, 'f', 0, 64)
	case t.Metric == "acq/s":
		return strconv.FormatFloat(v, 'f', 0, 64) + "/s"
	}
	return Dur(v)
}

// ParseSLO reads an SLO: thresholds separated by commas, each METRIC OP
// VALUE — p99<=5ms, p99.9<20ms, errors<=0.1% (a share of attempts),
// errors<=10 (a count), acq/s>=1000 — and the older form p99=10ms, where
// = means at most. At least one threshold must be on latency: the first
// is the one capacity is planned on.
func ParseSLO(s string) (SLO, error) {
	var slo SLO
	var others []string
	for _, part := range strings.Split(s, ",") {
		t, err := parseThreshold(part)
		if err != nil {
			return SLO{}, &sloError{err.Error()}
		}
		if slo.Quantile == "" && t.latency() && t.Op == "<=" {
			slo.Quantile, slo.Limit = t.Metric, time.Duration(math.Round(t.Limit*float64(time.Microsecond)))
			continue
		}
		canon := t.String()
		if back, err := parseThreshold(canon); err != nil || back != t {
			return SLO{}, &sloError{fmt.Sprintf("%q: its limit cannot be written back exactly (as %q)", part, canon)}
		}
		others = append(others, canon)
	}
	if slo.Quantile == "" {
		return SLO{}, &sloError{fmt.Sprintf("%q: want a latency threshold, such as p99<=5ms, which capacity is planned on; "+
			"errors and acq/s may go with it (to check only those, add a loose one: '%s,max<=1h')", s, s)}
	}
	slo.others = strings.Join(others, ",")
	return slo, nil
}

// parseThreshold reads one threshold.
// ParseThreshold reads one threshold as ParseSLO does, e.g. a Breach's.
func ParseThreshold(s string) (Threshold, error) { return parseThreshold(s) }

func parseThreshold(s string) (Threshold, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexAny(s, "<>=")
	if i <= 0 {
		return Threshold{}, fmt.Errorf("%q: want METRIC<=VALUE, e.g. p99<=5ms or errors<=0.1%%", s)
	}
	metric := strings.ToLower(strings.TrimSpace(s[:i]))
	rest := s[i:]
	op := "<="
	for _, o := range []string{"<=", ">=", "<", ">", "="} {
		if strings.HasPrefix(rest, o) {
			op, rest = o, strings.TrimSpace(rest[len(o):])
			break
		}
	}
	if op == "=" {
		op = "<=" // p99=10ms: the form capacity planning always read, an upper bound
	}
	switch metric {
	case "p99.9":
		metric = "p999"
	case "p99.99":
		metric = "p9999"
	case "throughput", "acq_per_s":
		metric = "acq/s"
	}
	switch {
	case metric == "errors":
		return parseErrors(op, rest)
	case metric == "acq/s":
		v, err := strconv.ParseFloat(strings.TrimSuffix(rest, "/s"), 64)
		if err != nil || !finite(v) || v < 0 || (op != ">=" && op != ">") {
			return Threshold{}, fmt.Errorf("%q: want acq/s>=N, a floor on acquisitions per second", s)
		}
		return Threshold{Metric: metric, Op: op, Limit: v}, nil
	}
	if !isLatencyMetric(metric) {
		return Threshold{}, fmt.Errorf("%q: metric must be p50, p90, p95, p99, p99.9, p99.99, max, mean, errors or acq/s", s)
	}
	d, err := time.ParseDuration(rest)
	if err != nil || d <= 0 || (op != "<=" && op != "<") {
		return Threshold{}, fmt.Errorf("%q: want %s<=DURATION with a positive duration, e.g. %s<=5ms", s, metricLabel(metric), metricLabel(metric))
	}
	if d > MaxLatencyLimit {
		return Threshold{}, fmt.Errorf("%q: a latency limit is at most %v", s, MaxLatencyLimit)
	}
	return Threshold{Metric: metric, Op: op, Limit: float64(d) / float64(time.Microsecond)}, nil
}

func parseErrors(op, rest string) (Threshold, error) {
	share := strings.HasSuffix(rest, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(rest, "%"), 64)
	if err != nil || !finite(v) || v < 0 || (share && v > 100) || (op != "<=" && op != "<") {
		return Threshold{}, fmt.Errorf("%q: want errors<=0.1%% (a share of attempts) or errors<=N (a count)", "errors"+op+rest)
	}
	if share {
		v /= 100
	}
	return Threshold{Metric: "errors", Op: op, Limit: v, Share: share}, nil
}

// finite reports whether v is neither NaN nor infinite: both parse as
// numbers, and neither is a limit summary.json can hold or a cell can be
// checked against (NaN meets nothing, +Inf everything).
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func isLatencyMetric(m string) bool {
	for _, q := range latencyMetrics {
		if q == m {
			return true
		}
	}
	return false
}

// Breach is one threshold of an SLO that one cell did not meet, and by
// how much.
type Breach struct {
	Cell      string `json:"cell"` // Cell.Key()
	Impl      string `json:"impl"`
	Scenario  string `json:"scenario"`
	Clients   int    `json:"clients"`
	Threshold string `json:"threshold"` // as ParseSLO reads it, e.g. p99<=5ms
	// Value is the cell's figure in the threshold's unit (µs, a share of
	// attempts, a count, per second), Limit the threshold's.
	Value float64 `json:"value"`
	Limit float64 `json:"limit"`
	// Excess is how far past the limit, relative to it: 0.44 is 44% over
	// (below, for a floor); 0 for a limit of zero, which has no ratio.
	Excess float64 `json:"excess"`
	// Kind says what kind of miss it is when it is not a figure past its
	// limit; Finding is the cell's, for a BreachFinding.
	Kind    BreachKind `json:"kind,omitempty"`
	Finding string     `json:"finding,omitempty"`
	// Over says it in words: "7.20ms against 5.00ms (+44%)", or for a
	// miss of twice the limit or more "97.3ms against 5.00ms (19.5×)".
	// Package report writes it; summaries before kind was kept carry only
	// it.
	Over string `json:"over"`
}

// BreachKind is what kind of miss a Breach is: "" is a figure past its
// limit.
type BreachKind string

const (
	// BreachFinding: the cell ended in a finding (a livelock); its
	// latency may look fine, the few it granted having been quick.
	BreachFinding BreachKind = "finding"
	// BreachNoAcquisitions: a latency threshold on a cell that granted
	// nothing.
	BreachNoAcquisitions BreachKind = "no_acquisitions"
	// BreachNotRecorded: a latency quantile the cell's summary does not
	// hold (written by an older lockbench).
	BreachNotRecorded BreachKind = "not_recorded"
)

// IsLatency says the threshold is on acquire latency.
func (t Threshold) IsLatency() bool { return t.latency() }

// Label names the threshold's figure for people: "p99", "p99.9".
func (t Threshold) Label() string { return metricLabel(t.Metric) }
