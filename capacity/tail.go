package capacity

import "math"

// Tail is what a trial saw of the SLO's quantile: of Arrivals served,
// Over took longer than the SLO's limit. A p99 ≤ 10 ms is met when at most
// 1 % of arrivals are over 10 ms; near a lock's capacity that 1 % rests on
// a handful of slow arrivals, and one trial's share is a sample of the
// lock's, not the share itself.
type Tail struct {
	Over, Arrivals int64
}

// Add pools two trials at the same rate.
func (t Tail) Add(u Tail) Tail { return Tail{t.Over + u.Over, t.Arrivals + u.Arrivals} }

// Share is the share of arrivals over the limit, 0 without arrivals.
func (t Tail) Share() float64 {
	if t.Arrivals == 0 {
		return 0
	}
	return float64(t.Over) / float64(t.Arrivals)
}

// z95 is the normal quantile of a two-sided 95 % interval.
const z95 = 1.959964

// Interval is the Wilson score interval, 95 %, of the lock's own share
// over the limit given this sample: unlike the normal approximation it
// stays inside [0, 1] and holds for the few over a tail is made of.
func (t Tail) Interval() (lo, hi float64) {
	if t.Arrivals == 0 {
		return 0, 1
	}
	n, p := float64(t.Arrivals), t.Share()
	z2 := z95 * z95
	mid := (p + z2/(2*n)) / (1 + z2/n)
	half := z95 / (1 + z2/n) * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	lo, hi = max(0, mid-half), min(1, mid+half)
	if t.Over == 0 { // exactly, not to a rounding error above it
		lo = 0
	}
	if t.Over == t.Arrivals {
		hi = 1
	}
	return lo, hi
}

// Decides reports whether the sample tells a lock whose share over the
// limit is within allowed from one whose share is not, at 95 %: false
// when the interval holds allowed, and only more arrivals can say.
func (t Tail) Decides(allowed float64) bool {
	lo, hi := t.Interval()
	return hi < allowed || lo > allowed
}
