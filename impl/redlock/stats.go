package redlock

import (
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Range of Stats.ValidityLeft: 1 µs to 1 h at 3 significant digits, the
// same as the harness's latency histograms.
const (
	validityMin    = 1
	validityMax    = int64(time.Hour / time.Microsecond)
	validityDigits = 3
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
		ValidityLeft:   hdrhistogram.New(validityMin, validityMax, validityDigits),
	}
}

// StatsReporter is implemented by Lockers that keep Stats; the harness
// finds it by type assertion on an impl.Locker.
type StatsReporter interface {
	RedlockStats() *Stats
}

// Merge adds o into s, growing MastersGranted if o has more masters. Like
// reading, it is for after the cell.
func (s *Stats) Merge(o *Stats) {
	if len(o.MastersGranted) > len(s.MastersGranted) {
		grown := make([]atomic.Int64, len(o.MastersGranted))
		for i := range s.MastersGranted {
			grown[i].Store(s.MastersGranted[i].Load())
		}
		s.MastersGranted = grown
	}
	for i := range o.MastersGranted {
		s.MastersGranted[i].Add(o.MastersGranted[i].Load())
	}
	s.ValidityLeft.Merge(o.ValidityLeft)
}

// recordValidity adds one grant's validity, clamped into range so that
// recording neither fails nor allocates.
func (s *Stats) recordValidity(d time.Duration) {
	us := d.Microseconds()
	if us < validityMin {
		us = validityMin
	} else if us > validityMax {
		us = validityMax
	}
	s.ValidityLeft.RecordValue(us)
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
