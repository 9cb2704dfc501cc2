package plan

import (
	"fmt"
	"path/filepath"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/capacity"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// intervals gives a search's answer its intervals: the range the
// capacity lies in, and the SLO's quantile at the answer from the
// trials its verdict rests on, pooled (cells are the trials', in order).
func (c *Capacity) intervals(out *result.CapacitySearch, ans capacity.Answer, cells []result.Cell) error {
	if lo, hi, lf, hf := ans.Interval(); lo > 0 || lf == capacity.FromSpread {
		out.Interval = &result.RateInterval{Low: lo, High: hi, LowFrom: lf, HighFrom: hf}
	}
	share := c.slo.TailShare()
	if ans.Rate == 0 || share == 0 {
		return nil
	}
	trials := answerPool(ans.Steps, ans.Rate)
	pooled := result.NewHistogram()
	for _, i := range trials {
		if i >= len(cells) || i >= len(out.Trials) {
			return nil
		}
		h, err := c.acquires(out.Trials[i].Dir, cells[i])
		if err != nil {
			return err
		}
		pooled.Merge(h)
	}
	n := pooled.TotalCount()
	if n == 0 {
		return nil
	}
	lo, hi := capacity.QuantileRanks(n, 1-share)
	out.LatencyInterval = &result.QuantileInterval{Quantile: c.slo.Quantile,
		PointUs: float64(pooled.ValueAtQuantile(100 * (1 - share))), LowUs: atRank(pooled, lo), HighUs: atRank(pooled, hi),
		Arrivals: n, Trials: len(trials)}
	return nil
}

// atRank is the value of rank k (1 the smallest) of h's values.
func atRank(h *hdrhistogram.Histogram, k int64) float64 {
	return float64(h.ValueAtQuantile(100 * float64(k) / float64(h.TotalCount())))
}

// answerPool is the steps the answer's verdict rests on: the last trial
// that passed at rate and the others its pool counted (none the machine
// limited or left unknown).
func answerPool(steps []capacity.Step, rate float64) []int {
	j := len(steps) - 1
	for ; j >= 0; j-- {
		if st := steps[j]; st.Rate == rate && st.Pass && !st.Unknown && st.Limit == "" {
			break
		}
	}
	if j < 0 {
		return nil
	}
	if steps[j].PoolSize == 0 { // judged alone
		return []int{j}
	}
	var out []int
	for i := j; i >= 0 && steps[i].Rate == rate; i-- {
		st := steps[i]
		if st.PoolSize > 0 && !st.Unknown && st.Limit == "" {
			out = append([]int{i}, out...)
		}
		if st.Pool == 1 {
			break
		}
	}
	return out
}

// acquires is a trial's acquire latencies (µs, from the intended start)
// read back from its interval log, merged.
func (c *Capacity) acquires(dir string, cell result.Cell) (*hdrhistogram.Histogram, error) {
	l, err := hlog.ReadCell(filepath.Join(c.Base.Out, dir), cell)
	if err != nil {
		return nil, fmt.Errorf("lockbench: capacity: reading the trial back: %w", err)
	}
	h := l.Merged(result.TagAcquire)
	if h == nil {
		h = result.NewHistogram()
	}
	return h, nil
}
