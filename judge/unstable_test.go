package judge

import (
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/result"
)

func TestAP99InTheGapOfABimodalDistributionIsUnstable(t *testing.T) {
	h := hdrhistogram.New(1, 10_000_000, 3)
	for range 990 {
		h.RecordValue(7_000) // a grant: 7 ms
	}
	for range 10 {
		h.RecordValue(100_000) // a retry: 100 ms
	}
	if l := result.LatencyOf(h); !UnstableP99(l) {
		t.Fatalf("1 %% of acquisitions at 100 ms, the rest at 7 ms: %+v, want the p99 unstable", l)
	}
	h.Reset()
	for i := range 1000 {
		h.RecordValue(int64(7_000 + 10*i))
	}
	if l := result.LatencyOf(h); UnstableP99(l) {
		t.Fatalf("a smooth tail: %+v, want a stable p99", l)
	}
	if UnstableP99(result.Latency{P99: 5}) {
		t.Fatal("a summary from before p98.5 was kept cannot say")
	}
}
