package hlog

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/result"
)

// CellLog is a cell's interval log: one histogram per tag and interval
// (about a second each), in file order. Values are microseconds.
type CellLog struct {
	Intervals []*hdrhistogram.Histogram
}

// Read reads an HdrHistogram interval log written by `lockbench run`.
// A log whose first line is the closed-log mark (every log lockbench
// writes now) must end with its end record, and hold as many interval
// histograms as that says: a log cut at a line boundary — a process
// killed, a disk full — otherwise reads as its first seconds without a
// word. Such a log, or one altered, is an error wrapping ErrCorrupt
// and naming the file. Logs without the mark, written before it existed,
// are read as they are: nothing in them can tell a cut.
func Read(path string) (*CellLog, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	want, closed, err := hlogEnd(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrCorrupt, path, err)
	}
	r := hdrhistogram.NewHistogramLogReader(bytes.NewReader(b))
	var l CellLog
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			return nil, fmt.Errorf("result: %s: %w", path, err)
		}
		if h == nil {
			break
		}
		l.Intervals = append(l.Intervals, h)
	}
	if closed && len(l.Intervals) != want {
		return nil, fmt.Errorf("%w: %s: %d interval histograms, its end record says %d", ErrCorrupt, path, len(l.Intervals), want)
	}
	return &l, nil
}

// ErrCorrupt is wrapped by Read's error for a closed-format log
// cut short or altered.
var ErrCorrupt = errors.New("result: interval log cut short or altered")

// hlogEnd checks a log's closing: closed says the log carries the mark,
// want is the count its end record gives. An error says why a marked log
// is not whole.
func hlogEnd(b []byte) (want int, closed bool, err error) {
	mark := []byte(hlogMark + "\n")
	switch {
	case len(b) == 0:
		return 0, true, errors.New("the file is empty") // no writer leaves a log empty
	case len(b) < len(mark) && bytes.HasPrefix(mark, b):
		return 0, true, errors.New("it ends inside its first line")
	case !bytes.HasPrefix(b, mark):
		return 0, false, nil
	}
	if !bytes.HasSuffix(b, []byte("\n")) {
		return 0, true, errors.New("it ends inside a line")
	}
	body := b[:len(b)-1]
	last := body[bytes.LastIndexByte(body, '\n')+1:]
	if _, err := fmt.Sscanf(string(last), hlogEndFormat, &want); err != nil || fmt.Sprintf(hlogEndFormat, want) != string(last) {
		return 0, true, fmt.Errorf("no end record (last line %.60q)", last)
	}
	return want, true, nil
}

// ReadCell reads a cell's .hlog in dir; a missing one is nil, not an
// error, since runs from before .hlog files existed have none. No interval
// ends after the cell did (see CutAt).
func ReadCell(dir string, c result.Cell) (*CellLog, error) {
	l, err := Read(result.CellPath(dir, c, result.HlogExt))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err == nil && c.DurationS > 0 {
		l.CutAt(time.Duration(c.DurationS * float64(time.Second)))
	}
	return l, err
}

// CutAt ends every interval at most d after the log's first interval
// began. Logs written before lockbench cut the last interval at the cell's
// end say it lasted a whole second when it lasted a fraction of one: its
// rate, counted over the second, fell towards zero at the end of every
// timeline and widened compare's noise band. Were the first interval
// missing (an empty first second), the cut falls later, never into
// measured time.
func (l *CellLog) CutAt(d time.Duration) {
	if l == nil || len(l.Intervals) == 0 || d <= 0 {
		return
	}
	t0 := l.Intervals[0].StartTimeMs()
	for _, h := range l.Intervals {
		t0 = min(t0, h.StartTimeMs())
	}
	end := t0 + d.Milliseconds()
	for _, h := range l.Intervals {
		if h.StartTimeMs() < end && h.EndTimeMs() > end {
			h.SetEndTimeMs(end)
		}
	}
}

// Tagged returns the intervals carrying tag, in order.
func (l *CellLog) Tagged(tag string) []*hdrhistogram.Histogram {
	if l == nil {
		return nil
	}
	var out []*hdrhistogram.Histogram
	for _, h := range l.Intervals {
		if h.Tag() == tag {
			out = append(out, h)
		}
	}
	return out
}

// Merged returns all intervals carrying tag merged into one histogram, or
// nil when there are none.
func (l *CellLog) Merged(tag string) *hdrhistogram.Histogram {
	hs := l.Tagged(tag)
	if len(hs) == 0 {
		return nil
	}
	m := result.NewHistogram()
	for _, h := range hs {
		m.Merge(h)
	}
	return m
}

// IntervalStat is what one interval of a log says: its middle, in
// seconds after the first interval began, the acquisitions per second in
// it, and its latency quantiles in microseconds. Empty marks an interval
// with no acquisitions at all, which has no quantiles.
type IntervalStat struct {
	MidS, PerS float64
	P50, P99   float64
	Empty      bool
}

// IntervalSample is an interval's figures with what statistics over
// intervals need to weigh it: its length and its acquisitions.
type IntervalSample struct {
	IntervalStat
	LengthS float64
	N       int64
}

// IntervalStats summarises the intervals tagged tag, in time order (see
// IntervalSamples).
func (l *CellLog) IntervalStats(tag string) []IntervalStat {
	return statsOf(l.IntervalSamples(tag))
}

// statsOf is samples' figures without their weights; nil for none.
func statsOf(samples []IntervalSample) []IntervalStat {
	if samples == nil {
		return nil
	}
	out := make([]IntervalStat, len(samples))
	for i, s := range samples {
		out[i] = s.IntervalStat
	}
	return out
}

// IntervalSamples summarises the intervals tagged tag, in time order, each
// with its actual length: the last interval of a cell ends where the cell
// did, so it is shorter than the others, and its rate is counted over
// that length, never over a whole interval. An interval shorter than half
// the typical one (the stub at the end of a cell) is left out: its rate
// and quantiles rest on too little to stand beside the others. A writer may
// leave empty intervals out of the log; a gap of whole intervals between
// two is filled with empty ones, since a second without acquisitions is a
// finding (a stall), not missing data.
func (l *CellLog) IntervalSamples(tag string) []IntervalSample {
	var ivs []interval
	for _, h := range l.Tagged(tag) {
		ivs = append(ivs, intervalOf(h))
	}
	return samplesOf(ivs)
}

// interval is what the summaries over intervals read of one interval
// histogram: its span (ms since the epoch), its count and its quantiles.
type interval struct {
	start, end, n int64
	p50, p99      float64
}

func intervalOf(h *hdrhistogram.Histogram) interval {
	return interval{start: h.StartTimeMs(), end: h.EndTimeMs(), n: h.TotalCount(),
		p50: float64(h.ValueAtQuantile(50)), p99: float64(h.ValueAtQuantile(99))}
}

// samplesOf is IntervalSamples of intervals in any order.
func samplesOf(ivs []interval) []IntervalSample {
	if len(ivs) == 0 {
		return nil
	}
	ivs = slices.Clone(ivs)
	slices.SortStableFunc(ivs, func(a, b interval) int { return cmp.Compare(a.start, b.start) })
	lengths := make([]int64, 0, len(ivs))
	for _, h := range ivs {
		lengths = append(lengths, h.end-h.start)
	}
	slices.Sort(lengths)
	typical := lengths[len(lengths)/2]
	t0 := ivs[0].start
	mid := func(start, end int64) float64 { return float64(start+end-2*t0) / 2000 }
	var out []IntervalSample
	prevEnd := t0
	for _, h := range ivs {
		if typical > 0 {
			for gap := prevEnd; h.start-gap >= typical; gap += typical {
				out = append(out, IntervalSample{IntervalStat: IntervalStat{MidS: mid(gap, gap+typical), Empty: true},
					LengthS: float64(typical) / 1000})
			}
		}
		prevEnd = max(prevEnd, h.end)
		ms := h.end - h.start
		if ms <= 0 || 2*ms < typical {
			continue
		}
		out = append(out, IntervalSample{
			IntervalStat: IntervalStat{MidS: mid(h.start, h.end), PerS: float64(h.n) / (float64(ms) / 1000), P50: h.p50, P99: h.p99},
			LengthS:      float64(ms) / 1000,
			N:            h.n,
		})
	}
	return out
}
