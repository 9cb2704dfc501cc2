package impl

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/results"
)

// NewHistogram returns an empty histogram of microseconds in the geometry
// every lockbench histogram shares (see results.NewHistogram), so that an
// implementation's own distributions merge with the harness's.
func NewHistogram() *hdrhistogram.Histogram { return results.NewHistogram() }

// RecordMicros records d in microseconds without allocating.
func RecordMicros(h *hdrhistogram.Histogram, d time.Duration) { results.RecordMicros(h, d) }
