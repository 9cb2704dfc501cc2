package impl

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/result"
)

// NewHistogram returns an empty histogram of microseconds in the geometry
// every lockbench histogram shares (see result.NewHistogram), so that an
// implementation's own distributions merge with the harness's.
func NewHistogram() *hdrhistogram.Histogram { return result.NewHistogram() }

// RecordMicros records d in microseconds without allocating.
func RecordMicros(h *hdrhistogram.Histogram, d time.Duration) { result.RecordMicros(h, d) }
