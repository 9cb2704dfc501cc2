package lockbench

import (
	"bytes"
	"fmt"
	"path/filepath"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/report"
)

// WriteIntervalLog writes res's timeline as an HdrHistogram interval log
// (DIR/<cell>.hlog): one histogram per second per tag (acquire, release),
// values in microseconds, readable by HdrHistogram's own log tools.
func WriteIntervalLog(dir string, res Result) error {
	var buf bytes.Buffer
	w := hdrhistogram.NewHistogramLogWriter(&buf)
	startMs := res.Start.UnixMilli()
	w.SetBaseTime(startMs)
	for _, err := range []error{
		w.OutputLogFormatVersion(),
		w.OutputComment(fmt.Sprintf("lockbench %s %s: latencies in microseconds", Version, res.Key())),
		w.OutputStartTime(startMs),
		w.OutputBaseTime(startMs),
		w.OutputLegend(),
	} {
		if err != nil {
			return fmt.Errorf("lockbench: hlog: %w", err)
		}
	}
	// The values are µs. The writer's max column divides by its fixed
	// ns→ms ratio; tools that read the histograms themselves are unaffected.
	// The last second may be cut short by the cell's end: stamp it with
	// the time it covered, so its rate reads true.
	end := res.Start.Add(time.Duration(res.DurationS * float64(time.Second)))
	for _, iv := range res.Intervals {
		ivEnd := iv.Start.Add(IntervalLength)
		if res.DurationS > 0 && end.After(iv.Start) && end.Before(ivEnd) {
			ivEnd = end
		}
		for _, h := range []struct {
			tag string
			h   *hdrhistogram.Histogram
		}{{report.TagAcquire, iv.Acquire}, {report.TagRelease, iv.Release},
			{report.TagHandoff, iv.Handoff}, {report.TagService, iv.Service}} {
			if h.h.TotalCount() == 0 {
				continue
			}
			c := h.h.Clone()
			c.SetTag(h.tag)
			c.SetStartTimeMs(iv.Start.UnixMilli())
			c.SetEndTimeMs(ivEnd.UnixMilli())
			if err := w.OutputIntervalHistogram(c); err != nil {
				return fmt.Errorf("lockbench: hlog: %w", err)
			}
		}
	}
	return report.WriteFileAtomic(filepath.Join(dir, report.CellFile(res.Cell)+".hlog"), buf.Bytes())
}
