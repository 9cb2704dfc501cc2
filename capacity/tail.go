package capacity

import "math"

// Tail is what a trial saw of the SLO's quantile: of Arrivals served,
// Over took longer than the SLO's limit. A p99 ≤ 10 ms is met when at most
// 1 % of arrivals are over 10 ms; near a lock's capacity that 1 % rests on
// a handful of slow arrivals, and one trial's share is a sample of the
// lock's, not the share itself.
type Tail struct {
	Over, Arrivals int64
	// Seconds is the same count second by second (the trial's interval
	// log), when known. Arrivals over the limit need not come one by one:
	// near saturation a queue builds for seconds at a time (zk-pred at
	// 94 % of its capacity put up to 542 a second over 10 ms, in episodes
	// of 5–6 s with calm seconds between), and a server that stalls holds
	// up every arrival due in the stall. Such arrivals are not
	// independent, and their share is less sure than their number says
	// (Dispersion).
	Seconds []Count
}

// Count is arrivals, and those of them over the limit, in one second.
type Count struct{ Over, Arrivals int64 }

// Add pools two trials at the same rate.
func (t Tail) Add(u Tail) Tail {
	var sec []Count
	if len(t.Seconds)+len(u.Seconds) > 0 {
		sec = append(append(make([]Count, 0, len(t.Seconds)+len(u.Seconds)), t.Seconds...), u.Seconds...)
	}
	return Tail{t.Over + u.Over, t.Arrivals + u.Arrivals, sec}
}

// Dispersion is how much more the arrivals over the limit varied from
// second to second than independent arrivals would: the Pearson χ² of the
// seconds' counts against the share over them all, per degree of
// freedom — 1 when they vary as independent ones do. Seconds are joined
// until each expects minExpected arrivals over the limit, so that rare
// ones are not judged a second at a time. It is 1 unless χ² exceeds its
// 95th percentile for independent arrivals: chance alone would otherwise
// widen every fifth interval or so.
func (t Tail) Dispersion() float64 {
	p := t.Share()
	if p <= 0 || p >= 1 || len(t.Seconds) < 2 {
		return 1
	}
	var blocks []Count
	var b Count
	for _, c := range t.Seconds {
		b.Over, b.Arrivals = b.Over+c.Over, b.Arrivals+c.Arrivals
		if float64(b.Arrivals)*p >= minExpected {
			blocks, b = append(blocks, b), Count{}
		}
	}
	if b.Arrivals > 0 { // the rest joins the last block
		if len(blocks) == 0 {
			return 1
		}
		l := &blocks[len(blocks)-1]
		l.Over, l.Arrivals = l.Over+b.Over, l.Arrivals+b.Arrivals
	}
	df := len(blocks) - 1
	if df < 1 {
		return 1
	}
	var chi2 float64
	for _, b := range blocks {
		e := float64(b.Arrivals) * p
		d := float64(b.Over) - e
		chi2 += d * d / (e * (1 - p))
	}
	if chi2 <= chi2Q95(df) {
		return 1
	}
	return chi2 / float64(df)
}

// minExpected is the arrivals over the limit a block of seconds is to
// expect before it is judged (Dispersion).
const minExpected = 2

// chi2Q95 is the 95th percentile of χ² with df degrees of freedom, by
// Wilson and Hilferty's cube-root approximation (3.74 for 1, the exact
// 3.84; within 0.5 % from 5 on).
func chi2Q95(df int) float64 {
	k := float64(df)
	c := 1 - 2/(9*k) + 1.644854*math.Sqrt(2/(9*k))
	return k * c * c * c
}

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
// stays inside [0, 1] and holds for the few over a tail is made of. When
// the arrivals over the limit came in bursts (Dispersion φ > 1), the
// sample counts as Arrivals/φ independent ones, as a quasi-binomial
// model has it, and the interval widens by about √φ.
func (t Tail) Interval() (lo, hi float64) {
	if t.Arrivals == 0 {
		return 0, 1
	}
	n, p := float64(t.Arrivals)/t.Dispersion(), t.Share()
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
