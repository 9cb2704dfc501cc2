package linear

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/result"
)

// BenchmarkCheck checks a correct history of 8 clients taking turns: the
// check's cost per operation.
func BenchmarkCheck(b *testing.B) {
	var h hist
	h.cycles(10, 50_000, 8, 1)
	hs := h.history(true)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if rep := Check(hs, time.Minute); rep.Linearizable != result.Linearizable {
			b.Fatal(rep.Linearizable)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(hs.Ops)), "ns/op-checked")
}
