package hlog

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/result"
)

// IntervalLength is the length of the intervals of a cell's timeline.
const IntervalLength = time.Second

// Interval is one interval of a cell: the latencies recorded by every
// client in it, merged, by tag. A nil or empty histogram is written as
// nothing.
type Interval struct {
	// Start and End bound the interval; a zero End is Start plus
	// IntervalLength.
	Start, End                         time.Time
	Acquire, Release, Handoff, Service *hdrhistogram.Histogram
	Abandon, Renew                     *hdrhistogram.Histogram
}

// hlogMark is the first line of every interval log lockbench writes: it
// says the log ends with an end record (hlogEndFormat) counting its
// interval histograms, which HdrHistogram's own readers skip as comments.
const hlogMark = "#[lockbench closed log: ends with #[End: N interval histograms]]"

// hlogEndFormat is a log's last line: how many interval histograms came
// before it.
const hlogEndFormat = "#[End: %d interval histograms]"

// Writer writes a cell's timeline as an HdrHistogram interval log
// (DIR/<cell>.hlog) while the cell runs: one histogram per interval per
// tag, values in microseconds, readable by HdrHistogram's own log tools.
// Each interval is on disk once Write returns, so an interrupted run keeps
// every second it measured, and a long cell's memory does not grow. The
// log is written as <cell>.hlog.partial and renamed to <cell>.hlog by
// Close, after its end record.
type Writer struct {
	f      io.WriteCloser
	path   string
	n      int // interval histograms written
	buf    *bufio.Writer
	w      *hdrhistogram.HistogramLogWriter
	key    string
	writer string
	begun  bool
	err    error
}

// Create creates (or empties) the .hlog of cell c in dir; writer
// names the program in the log's comment.
func Create(dir string, c result.Cell, writer string) (*Writer, error) {
	path, err := result.CreateCellPath(dir, c, result.HlogExt)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path+result.PartialExt, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	return newLogWriter(f, path, c.Key(), writer), nil
}

// newLogWriter writes a log to f, which is path+result.PartialExt, renamed to
// path when whole: the seam where a test puts a disk that fills up.
func newLogWriter(f io.WriteCloser, path, key, writer string) *Writer {
	l := &Writer{f: f, path: path, buf: bufio.NewWriter(f), key: key, writer: writer}
	l.w = hdrhistogram.NewHistogramLogWriter(l.buf)
	return l
}

// begin writes the log's header, once, with the time measuring began.
func (l *Writer) begin(start time.Time) {
	if l.begun {
		return
	}
	l.begun = true
	startMs := start.UnixMilli()
	l.w.SetBaseTime(startMs)
	_, markErr := fmt.Fprintln(l.buf, hlogMark)
	for _, err := range []error{
		markErr,
		l.w.OutputLogFormatVersion(),
		l.w.OutputComment(fmt.Sprintf("%s %s: latencies in microseconds", l.writer, l.key)),
		l.w.OutputStartTime(startMs),
		l.w.OutputBaseTime(startMs),
		l.w.OutputLegend(),
	} {
		if err != nil && l.err == nil {
			l.err = fmt.Errorf("result: hlog: %w", err)
		}
	}
}

// Write appends one interval; start is when the cell began measuring. An
// error is kept and returned by Close as well.
func (l *Writer) Write(start time.Time, iv Interval) error {
	l.begin(start)
	end := iv.End
	if end.IsZero() {
		end = iv.Start.Add(IntervalLength)
	}
	for _, h := range []struct {
		tag string
		h   *hdrhistogram.Histogram
	}{{result.TagAcquire, iv.Acquire}, {result.TagRelease, iv.Release}, {result.TagHandoff, iv.Handoff}, {result.TagService, iv.Service},
		{result.TagAbandon, iv.Abandon}, {result.TagRenew, iv.Renew}} {
		if h.h == nil || h.h.TotalCount() == 0 {
			continue
		}
		// The values are µs. The writer's max column divides by its fixed
		// ns→ms ratio; tools that read the histograms are unaffected.
		h.h.SetTag(h.tag)
		h.h.SetStartTimeMs(iv.Start.UnixMilli())
		h.h.SetEndTimeMs(end.UnixMilli())
		if err := l.w.OutputIntervalHistogram(h.h); err != nil && l.err == nil {
			l.err = fmt.Errorf("result: hlog: %w", err)
		}
		l.n++
	}
	if err := l.buf.Flush(); err != nil && l.err == nil {
		l.err = fmt.Errorf("result: hlog: %w", err)
	}
	return l.err
}

// Close writes the header if no interval came (start is when the cell
// began) and the end record, flushes and closes the file and, when all of
// it is on disk, gives it its own name. It returns the first error; the
// file then keeps its .partial name.
func (l *Writer) Close(start time.Time) error {
	l.begin(start)
	if _, err := fmt.Fprintf(l.buf, hlogEndFormat+"\n", l.n); err != nil && l.err == nil {
		l.err = fmt.Errorf("result: hlog: %w", err)
	}
	if err := l.buf.Flush(); err != nil && l.err == nil {
		l.err = fmt.Errorf("result: hlog: %w", err)
	}
	if err := l.f.Close(); err != nil && l.err == nil {
		l.err = fmt.Errorf("result: hlog: %w", err)
	}
	if l.err == nil {
		if err := os.Rename(l.path+result.PartialExt, l.path); err != nil {
			l.err = fmt.Errorf("result: hlog: %w", err)
		}
	}
	return l.err
}

// WriteCell writes a whole timeline at once (see Writer), the last
// interval cut at the cell's measured duration.
func WriteCell(dir string, c result.Cell, start time.Time, ivs []Interval, writer string) error {
	l, err := Create(dir, c, writer)
	if err != nil {
		return err
	}
	end := start.Add(time.Duration(c.DurationS * float64(time.Second)))
	for _, iv := range ivs {
		ivEnd := iv.End
		if ivEnd.IsZero() {
			ivEnd = iv.Start.Add(IntervalLength)
		}
		if c.DurationS > 0 && end.After(iv.Start) && end.Before(ivEnd) {
			iv.End = end
		}
		l.Write(start, iv)
	}
	return l.Close(start)
}
