package hlog

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/result"
)

// Digest is what a report needs of a cell's interval log, for one
// tag: every interval's span, count and quantiles, and all of them merged.
// ReadDigest builds it as it decodes the log, dropping each interval
// histogram once its figures are taken, so that what rendering holds does
// not grow with a cell's length: an hour-long cell's log decodes into
// thousands of histograms of a quarter megabyte each, and a report that
// kept them all (CellLog) peaked above a gigabyte. Its methods take the
// tag as CellLog's do and answer nil for any other; a nil digest (a cell
// without a log) answers nil too.
type Digest struct {
	tag    string
	merged *hdrhistogram.Histogram
	ivs    []interval
}

// ReadDigest reads the digest of tag from cell c's .hlog in dir, as
// ReadCell reads the log (a missing log is nil, not an error; a closed
// log must be whole; no interval ends after the cell did).
func ReadDigest(dir string, c result.Cell, tag string) (*Digest, error) {
	path := result.CellPath(dir, c, result.HlogExt)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	want, closed, err := hlogEnd(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrCorrupt, path, err)
	}
	r := hdrhistogram.NewHistogramLogReader(bytes.NewReader(b))
	d := &Digest{tag: tag}
	n, t0 := 0, int64(math.MaxInt64)
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			return nil, fmt.Errorf("result: %s: %w", path, err)
		}
		if h == nil {
			break
		}
		n++
		t0 = min(t0, h.StartTimeMs())
		if h.Tag() == tag {
			d.add(h)
		}
	}
	if closed && n != want {
		return nil, fmt.Errorf("%w: %s: %d interval histograms, its end record says %d", ErrCorrupt, path, n, want)
	}
	if c.DurationS > 0 && n > 0 {
		end := t0 + time.Duration(c.DurationS*float64(time.Second)).Milliseconds()
		for i := range d.ivs {
			if iv := &d.ivs[i]; iv.start < end && iv.end > end {
				iv.end = end // as CutAt does
			}
		}
	}
	return d, nil
}

// DigestOf is the digest of tag of a log already read.
func DigestOf(l *CellLog, tag string) *Digest {
	if l == nil {
		return nil
	}
	d := &Digest{tag: tag}
	for _, h := range l.Tagged(tag) {
		d.add(h)
	}
	return d
}

func (d *Digest) add(h *hdrhistogram.Histogram) {
	if d.merged == nil {
		d.merged = result.NewHistogram()
	}
	d.merged.Merge(h)
	d.ivs = append(d.ivs, intervalOf(h))
}

// Merged is every interval of tag merged; nil when there is none.
func (d *Digest) Merged(tag string) *hdrhistogram.Histogram {
	if d == nil || tag != d.tag {
		return nil
	}
	return d.merged
}

// IntervalSamples is CellLog.IntervalSamples of the digest's intervals.
func (d *Digest) IntervalSamples(tag string) []IntervalSample {
	if d == nil || tag != d.tag {
		return nil
	}
	return samplesOf(d.ivs)
}

// IntervalStats is CellLog.IntervalStats of the digest's intervals.
func (d *Digest) IntervalStats(tag string) []IntervalStat {
	return statsOf(d.IntervalSamples(tag))
}
