package result

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The geometry of every latency histogram lockbench keeps — the harness's,
// an implementation's own, the reports' — so that any two merge losslessly
// (shards from many machines included): 1 µs to 1 h, 3 significant digits.
const (
	HistMinUs  = 1
	HistMaxUs  = int64(time.Hour / time.Microsecond)
	HistDigits = 3
)

// NewHistogram returns an empty histogram of microseconds in that geometry.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistMinUs, HistMaxUs, HistDigits)
}

// RecordMicros records d in microseconds. It allocates nothing: a value
// beyond the range is clamped rather than rejected with an error value.
func RecordMicros(h *hdrhistogram.Histogram, d time.Duration) {
	us := d.Microseconds()
	if us < HistMinUs {
		us = HistMinUs
	} else if us > HistMaxUs {
		us = HistMaxUs
	}
	h.RecordValue(us)
}

// LatencyOf summarises h (microseconds) as a Latency; an empty h gives
// the zero Latency.
func LatencyOf(h *hdrhistogram.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		P50: float64(h.ValueAtQuantile(50)), P90: float64(h.ValueAtQuantile(90)),
		P95: float64(h.ValueAtQuantile(95)), P99: float64(h.ValueAtQuantile(99)),
		P999: float64(h.ValueAtQuantile(99.9)), P9999: float64(h.ValueAtQuantile(99.99)),
		Max: float64(h.Max()), Mean: h.Mean(),
	}
}
