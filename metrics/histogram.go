package metrics

import (
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// nativeSchema is the native histograms' resolution: buckets grow by
// 2^(1/8), about 9% — finer than the summary's needs, coarser than the
// HdrHistograms' 0.1%.
const nativeSchema = 3

// latencyVec is a histogram per cell fed whole HdrHistograms: a bucket at
// a time, not a value at a time. client_golang's Histogram takes one
// observation per call, and two per lock cycle (acquire, release) cost
// the generator a third more CPU per cycle; this costs a few hundred
// additions per second per cell. It serves native buckets and the classic
// ones beside them.
type latencyVec struct {
	desc *prometheus.Desc
	mu   sync.Mutex
	hs   map[string]*latencyHist // by label values joined
}

// latencyHist is one series' counts so far.
type latencyHist struct {
	labels  []string
	count   uint64
	sum     float64
	zero    uint64         // values of 0
	native  map[int]uint64 // native bucket index → count
	classic []uint64       // per classic bucket, not cumulative; +Inf last
}

func newLatencyVec(name, help string) *latencyVec {
	return &latencyVec{desc: prometheus.NewDesc(name, help, cellLabels, nil), hs: map[string]*latencyHist{}}
}

// add records what h holds (microseconds) into the series of labels,
// each value at the top of its HdrHistogram bucket, as the summary's
// percentiles read them.
func (v *latencyVec) add(labels []string, h *hdrhistogram.Histogram) {
	if h == nil || h.TotalCount() == 0 {
		return
	}
	bars := h.Distribution()
	v.mu.Lock()
	defer v.mu.Unlock()
	key := strings.Join(labels, "\x00")
	s := v.hs[key]
	if s == nil {
		s = &latencyHist{labels: labels, native: map[int]uint64{}, classic: make([]uint64, len(latencyBuckets)+1)}
		v.hs[key] = s
	}
	for _, b := range bars {
		if b.Count <= 0 {
			continue
		}
		n, x := uint64(b.Count), float64(b.To)/1e6
		s.count += n
		s.sum += x * float64(n)
		s.classic[classicIndex(x)] += n
		if x <= 0 {
			s.zero += n
			continue
		}
		s.native[nativeIndex(x)] += n
	}
}

// nativeIndex is the native bucket holding x > 0: bucket i holds
// (2^((i-1)/2^s), 2^(i/2^s)].
func nativeIndex(x float64) int {
	return int(math.Ceil(math.Log2(x) * (1 << nativeSchema)))
}

// classicIndex is the first classic bucket whose upper bound is ≥ x
// (len(latencyBuckets) for +Inf).
func classicIndex(x float64) int {
	i, _ := slices.BinarySearch(latencyBuckets, x)
	return i
}

func (v *latencyVec) Describe(ch chan<- *prometheus.Desc) { ch <- v.desc }

func (v *latencyVec) Collect(ch chan<- prometheus.Metric) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, s := range v.hs {
		ch <- &latencyMetric{desc: v.desc, labels: s.labels, h: s.snapshot()}
	}
}

// snapshot is the series as Prometheus's data model has it.
func (s *latencyHist) snapshot() *dto.Histogram {
	h := &dto.Histogram{SampleCount: proto.Uint64(s.count), SampleSum: proto.Float64(s.sum),
		Schema: proto.Int32(nativeSchema), ZeroThreshold: proto.Float64(prometheus.DefNativeHistogramZeroThreshold),
		ZeroCount: proto.Uint64(s.zero)}
	var cum uint64
	for i, ub := range latencyBuckets {
		cum += s.classic[i]
		h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: proto.Float64(ub), CumulativeCount: proto.Uint64(cum)})
	}
	idx := make([]int, 0, len(s.native))
	for i := range s.native {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var prev int64
	for j, i := range idx {
		if j == 0 || i != idx[j-1]+1 {
			off := int32(i)
			if j > 0 {
				off = int32(i - idx[j-1] - 1)
			}
			h.PositiveSpan = append(h.PositiveSpan, &dto.BucketSpan{Offset: proto.Int32(off), Length: proto.Uint32(0)})
		}
		sp := h.PositiveSpan[len(h.PositiveSpan)-1]
		*sp.Length++
		n := int64(s.native[i])
		h.PositiveDelta = append(h.PositiveDelta, n-prev)
		prev = n
	}
	if len(h.PositiveSpan) == 0 {
		// An empty native histogram still needs a span to be told from a
		// classic one.
		h.PositiveSpan = []*dto.BucketSpan{{Offset: proto.Int32(0), Length: proto.Uint32(0)}}
	}
	return h
}

// latencyMetric is one series as collected.
type latencyMetric struct {
	desc   *prometheus.Desc
	labels []string
	h      *dto.Histogram
}

func (m *latencyMetric) Desc() *prometheus.Desc { return m.desc }

func (m *latencyMetric) Write(out *dto.Metric) error {
	out.Label = prometheus.MakeLabelPairs(m.desc, m.labels)
	out.Histogram = m.h
	return nil
}
