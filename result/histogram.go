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
		P985: float64(h.ValueAtQuantile(98.5)), P995: float64(h.ValueAtQuantile(99.5)),
	}
}

// FairnessOf summarises how acquisitions were shared among clients (per:
// each client's count), with the longest acquire wait seen; nil for no
// clients.
func FairnessOf(per []int64, maxWaitUs float64) *Fairness {
	if len(per) == 0 {
		return nil
	}
	f := &Fairness{PerClient: per, MaxWaitUs: maxWaitUs}
	var sum, sq float64
	lo, hi := per[0], per[0]
	for _, n := range per {
		x := float64(n)
		sum += x
		sq += x * x
		lo, hi = min(lo, n), max(hi, n)
		if n == 0 {
			f.Starved++
		}
	}
	if sum > 0 {
		// Jain's index: 1 when all got the same, 1/n when one got all.
		f.Jain = sum * sum / (float64(len(per)) * sq)
		f.MaxShare = float64(hi) / sum
		f.MinShare = float64(lo) / sum
	}
	return f
}
