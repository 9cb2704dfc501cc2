package metrics

import (
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/lockbench/lockbench/result"
)

// A latencyVec fed an HdrHistogram serves what client_golang's own
// histogram serves after observing the same values one by one: the same
// native spans and deltas at the same schema, the same classic buckets,
// count and sum.
func TestLatencyVecMatchesClientGolang(t *testing.T) {
	t.Parallel()
	ref := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ref", Buckets: latencyBuckets,
		NativeHistogramBucketFactor: 1.1, NativeHistogramMaxBucketNumber: 1000})
	hdr := result.NewHistogram()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		us := int64(1 + rng.ExpFloat64()*300)
		if rng.IntN(50) == 0 {
			us *= 1000 // a tail, with gaps between spans
		}
		hdr.RecordValue(us)
	}
	for _, b := range hdr.Distribution() {
		for range b.Count {
			ref.Observe(float64(b.To) / 1e6)
		}
	}
	v := newLatencyVec("x", "x")
	v.add([]string{"a", "b", "1", "0/1", "r"}, hdr)
	v.add([]string{"a", "b", "1", "0/1", "r"}, nil)
	var want dto.Metric
	if err := ref.Write(&want); err != nil {
		t.Fatal(err)
	}
	got := v.hs["a\x00b\x001\x000/1\x00r"].snapshot()
	w := want.Histogram
	if got.GetSchema() != w.GetSchema() || got.GetSampleCount() != w.GetSampleCount() || got.GetSampleCount() != uint64(hdr.TotalCount()) {
		t.Fatalf("schema %d count %d, want %d %d", got.GetSchema(), got.GetSampleCount(), w.GetSchema(), w.GetSampleCount())
	}
	if d := got.GetSampleSum() - w.GetSampleSum(); d > 1e-6 || d < -1e-6 {
		t.Errorf("sum %v, want %v", got.GetSampleSum(), w.GetSampleSum())
	}
	// Spans may be encoded differently (client_golang bridges small gaps
	// with empty buckets); the buckets they say must be the same.
	if g, w := buckets(got), buckets(w); !maps.Equal(g, w) || len(g) < 20 {
		t.Errorf("native buckets %v\nwant %v", g, w)
	}
	for i, b := range w.Bucket {
		if got.Bucket[i].GetCumulativeCount() != b.GetCumulativeCount() {
			t.Errorf("classic bucket ≤%v: %d, want %d", b.GetUpperBound(), got.Bucket[i].GetCumulativeCount(), b.GetCumulativeCount())
		}
	}
}

// buckets decodes a native histogram's positive buckets, empty ones left
// out.
func buckets(h *dto.Histogram) map[int]int64 {
	out := map[int]int64{}
	idx, d := 0, 0
	var n int64
	for i, sp := range h.PositiveSpan {
		if i == 0 {
			idx = int(sp.GetOffset())
		} else {
			idx += int(sp.GetOffset())
		}
		for range sp.GetLength() {
			n += h.PositiveDelta[d]
			d++
			if n != 0 {
				out[idx] = n
			}
			idx++
		}
	}
	return out
}
