package redispubsub

import (
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/impl"
)

// stats are a client's own figures beyond impl.Counters, which is shared
// by every driver. Only the Locker's goroutine writes them; the histogram
// is not safe for concurrent use, and is read after the cell has ended.
type stats struct {
	// pttlWaits counts waits that ended with the PTTL and no message: a
	// missed release (a subscription lost and re-made between PUBLISH and
	// resubscription, Redisson issue #1763), or a holder that died.
	pttlWaits atomic.Int64
	// pttlWaited holds those waits' lengths, in microseconds.
	pttlWaited *hdrhistogram.Histogram
	// publishes counts releases that freed the lock and published, and
	// receivers sums what PUBLISH answered: the deliveries the server made.
	publishes, receivers atomic.Int64
}

func (s *stats) init() { s.pttlWaited = impl.NewHistogram() }

func (s *stats) pttlWait(d time.Duration) {
	s.pttlWaits.Add(1)
	impl.RecordMicros(s.pttlWaited, d)
}

func (s *stats) published(receivers int64) {
	s.publishes.Add(1)
	s.receivers.Add(receivers)
}

// Histograms reports the PTTL waits' lengths (impl.Distributions).
func (l *Locker) Histograms() map[string]*hdrhistogram.Histogram {
	return map[string]*hdrhistogram.Histogram{"pttl_wait_ms": l.stats.pttlWaited}
}

// Vectors reports the PTTL waits, the releases that published and the
// deliveries their PUBLISHes made, each a vector of one count
// (impl.Distributions). The harness sums them over clients:
// publish_receivers then equals the Notifications the clients counted.
func (l *Locker) Vectors() map[string][]int64 {
	return map[string][]int64{
		"pttl_waits":        {l.stats.pttlWaits.Load()},
		"publishes":         {l.stats.publishes.Load()},
		"publish_receivers": {l.stats.receivers.Load()},
	}
}

// ResetDistributions empties them (impl.Distributions); only while no
// Acquire runs.
func (l *Locker) ResetDistributions() {
	l.stats.pttlWaits.Store(0)
	l.stats.publishes.Store(0)
	l.stats.receivers.Store(0)
	l.stats.pttlWaited.Reset()
}
