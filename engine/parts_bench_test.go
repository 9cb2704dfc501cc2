package engine

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/exclusion"
	"github.com/lockbench/lockbench/result"
)

// BenchmarkCycleParts is what each part of the harness's recording costs
// one acquire/release cycle, apart: the clock readings a cycle takes (4),
// its latencies into a histogram (2), its operations into the history
// (2), the mutual-exclusion checker's entry and exit, and its counters.
// Against BenchmarkHarness (the whole harness on the in-process lock) and
// a driver's cycle (BenchmarkDriver, scripts/redis-baseline), they say
// which part a regression is in; none may allocate.
func BenchmarkCycleParts(b *testing.B) {
	w := &Client{t0: time.Now()}
	b.Run("part=clock", func(b *testing.B) {
		b.ReportAllocs()
		var t time.Time
		for range b.N {
			t = w.Now()
			t = w.Now()
			t = w.Now()
			t = w.Now()
		}
		_ = t
	})
	b.Run("part=histogram", func(b *testing.B) {
		h := hdrhistogram.New(result.HistMinUs, result.HistMaxUs, result.HistDigits)
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			record(h, time.Duration(50+i%1000)*time.Microsecond)
			record(h, time.Duration(20+i%500)*time.Microsecond)
		}
	})
	b.Run("part=history", func(b *testing.B) {
		// The log is allocated before a cell; its pages are first touched
		// as it fills, and that is counted here, as in a cell.
		l := result.NewOpLog(2 * b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			l.Add(result.Op{Call: int64(i), Return: int64(i) + 10, Kind: result.OpAcquire, Outcome: result.OutOK})
			l.Add(result.Op{Call: int64(i) + 20, Return: int64(i) + 30, Kind: result.OpRelease, Outcome: result.OutOK})
		}
	})
	b.Run("part=checker", func(b *testing.B) {
		start := time.Now()
		k := exclusion.NewChecker(start, 1, func(int) string { return "lock-0" })
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			at := start.Add(time.Duration(i) * time.Microsecond)
			v := k.Enter(0, 0, uint64(i+1), true, at)
			k.Exit(v, 0, at.Add(500*time.Nanosecond))
		}
		if n, _ := k.Violations(); n != 0 {
			b.Fatalf("%d violations in one client's cycles", n)
		}
	})
	b.Run("part=counters", func(b *testing.B) {
		var acquires, releases atomic.Int64
		b.ReportAllocs()
		for range b.N {
			acquires.Add(1)
			releases.Add(1)
		}
	})
}
