package metrics

import (
	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
)

// observe adds what h recorded (microseconds) to o, a value per count at
// the top of its HdrHistogram bucket, as the summary's percentiles read
// them. It runs once a second per cell, off the recording path.
func observe(o prometheus.Observer, h *hdrhistogram.Histogram) {
	if h == nil || h.TotalCount() == 0 {
		return
	}
	for _, b := range h.Distribution() {
		v := float64(b.To) / 1e6
		for range b.Count {
			o.Observe(v)
		}
	}
}
