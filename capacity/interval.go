package capacity

import "math"

// Where an end of Answer.Interval comes from.
const (
	// FromTails: the trials' tails decided it at a nominal 95 % (Low,
	// High).
	FromTails = "tails"
	// FromBracket: the bisection's bracket, the answer itself (the
	// highest rate that passed) or the lowest rate that failed above it.
	FromBracket = "bracket"
)

// Interval is the range the lock's capacity lies in, as narrowly as the
// search put it: each end the tails' bound (Low, High) where they decided
// one, else the bracket's (Rate, Missed) — widened to the repeats' where
// they disagreed with the answer (Spread; an end open there is 0 with
// FromSpread). high is 0 when nothing failed above the answer; all are
// zero without an answer.
func (a Answer) Interval() (low, high float64, lowFrom, highFrom string) {
	if a.Rate == 0 {
		return 0, 0, "", ""
	}
	low, lowFrom = a.Rate, FromBracket
	if a.Low > 0 {
		low, lowFrom = a.Low, FromTails
	}
	high, highFrom = a.Missed, FromBracket
	if a.High > 0 {
		high, highFrom = a.High, FromTails
	}
	if sp := a.Spread; sp.Unstable() {
		if sp.PassedAt < sp.TrialsAt && (sp.Low < low || sp.Low == 0) {
			low, lowFrom = sp.Low, FromSpread
		}
		if sp.PassedMissed > 0 && (sp.High > high || sp.High == 0) {
			high, highFrom = sp.High, FromSpread
		}
	}
	if high == 0 && highFrom != FromSpread {
		highFrom = ""
	}
	return low, high, lowFrom, highFrom
}

// QuantileRanks are the ranks (1 to n, in ascending order of the
// values) of the order statistics that bound the q-quantile of n
// arrivals at 95 %, whatever their distribution: the number of arrivals
// below the true quantile is binomial (n, q), so its 2.5th and 97.5th
// percentiles, by the normal approximation with a continuity
// correction, bound the rank. At n·q·(1−q) below about 10 the
// approximation is rough and the ranks clamp to 1 and n: a p99 from a
// few hundred arrivals has no upper bound short of the largest.
func QuantileRanks(n int64, q float64) (lo, hi int64) {
	if n <= 0 {
		return 0, 0
	}
	nf := float64(n)
	half := z95 * math.Sqrt(nf*q*(1-q))
	lo = int64(math.Floor(nf*q - half))
	hi = int64(math.Ceil(nf*q+half)) + 1
	return min(max(lo, 1), n), min(max(hi, 1), n)
}
