package redlock

import (
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/impl"
)

// Stats are the Redlock distributions of one Locker.
//
// Only the Locker's own goroutine writes them, without locking; the
// histogram is not safe for concurrent use. Read them after the cell has
// ended (after the last Acquire returned), never while it runs.
type Stats struct {
	// MastersGranted[k] counts acquire attempts in which exactly k masters
	// answered OK to SET NX. It has M+1 entries.
	MastersGranted []atomic.Int64
	// ValidityLeft holds, per grant, the validity left in microseconds:
	// TTL − time spent asking − drift allowance.
	ValidityLeft *hdrhistogram.Histogram
}

// NewStats returns empty Stats for masters masters.
func NewStats(masters int) *Stats {
	return &Stats{
		MastersGranted: make([]atomic.Int64, masters+1),
		ValidityLeft:   impl.NewHistogram(),
	}
}

// StatsReporter is implemented by Lockers that keep Stats; the harness
// finds it by type assertion on an impl.Locker.
type StatsReporter interface {
	RedlockStats() *Stats
}

// recordValidity adds one grant's validity, clamped into range so that
// recording neither fails nor allocates.
func (s *Stats) recordValidity(d time.Duration) {
	impl.RecordMicros(s.ValidityLeft, d)
}

// Histograms reports the validity left at each grant (impl.Distributions).
func (l *Locker) Histograms() map[string]*hdrhistogram.Histogram {
	return map[string]*hdrhistogram.Histogram{"validity_ms": l.stats.ValidityLeft}
}

// ResetDistributions empties the distributions (impl.Distributions); only
// while no Acquire runs.
func (l *Locker) ResetDistributions() {
	for i := range l.stats.MastersGranted {
		l.stats.MastersGranted[i].Store(0)
	}
	l.stats.ValidityLeft.Reset()
}

// Vectors reports attempts by number of masters that said yes
// (impl.Distributions).
func (l *Locker) Vectors() map[string][]int64 {
	v := make([]int64, len(l.stats.MastersGranted))
	for i := range v {
		v[i] = l.stats.MastersGranted[i].Load()
	}
	return map[string][]int64{"masters_granted": v}
}
