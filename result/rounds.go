package result

import "math"

// RoundFigures are a cell's timed figures over its rounds (--repeat): each
// an Estimate holding every round's value. A cell run once has none.
type RoundFigures struct {
	// N is how many rounds the cell was measured in.
	N            int      `json:"n"`
	AcquiresPerS Estimate `json:"acquires_per_s"`
	// P50, P99 and P999 are of the acquire latency, in µs.
	P50  Estimate `json:"p50_us"`
	P99  Estimate `json:"p99_us"`
	P999 Estimate `json:"p999_us"`
	// GapP50 is the hand-off gap's median, in µs, where it was measured.
	GapP50 *Estimate `json:"handoff_gap_p50_us,omitempty"`
	// ServerCPUUs and LockbenchCPUUs are CPU time per acquisition (µs),
	// the sandboxed servers' together and lockbench's, where known.
	ServerCPUUs    *Estimate `json:"server_cpu_us_per_acquire,omitempty"`
	LockbenchCPUUs *Estimate `json:"lockbench_cpu_us_per_acquire,omitempty"`
}

// RoundsOf estimates the timed figures of rounds, each a whole run of one
// cell; nil for fewer than two rounds.
func RoundsOf(rounds []Cell) *RoundFigures {
	if len(rounds) < 2 {
		return nil
	}
	per := func(f func(Cell) float64) []float64 {
		vs := make([]float64, len(rounds))
		for i, c := range rounds {
			vs[i] = f(c)
		}
		return vs
	}
	optional := func(f func(Cell) float64) *Estimate {
		// A figure missing from any round is left out whole: its rounds
		// would no longer pair with another row's.
		vs := per(f)
		for _, v := range vs {
			if math.IsNaN(v) {
				return nil
			}
		}
		e := EstimateOf(vs)
		return &e
	}
	return &RoundFigures{
		N:            len(rounds),
		AcquiresPerS: EstimateOf(per(func(c Cell) float64 { return c.AcquiresPerS })),
		P50:          EstimateOf(per(func(c Cell) float64 { return c.AcquireLatencyUs.P50 })),
		P99:          EstimateOf(per(func(c Cell) float64 { return c.AcquireLatencyUs.P99 })),
		P999:         EstimateOf(per(func(c Cell) float64 { return c.AcquireLatencyUs.P999 })),
		GapP50: optional(func(c Cell) float64 {
			if c.HandoffGapUs == nil || c.HandoffGapUs.P50 == 0 {
				return math.NaN()
			}
			return c.HandoffGapUs.P50
		}),
		ServerCPUUs:    optional(serverCPUPerAcquire),
		LockbenchCPUUs: optional(lockbenchCPUPerAcquire),
	}
}

// serverCPUPerAcquire is the sandboxed servers' CPU per acquisition in
// µs, NaN where unknown.
func serverCPUPerAcquire(c Cell) float64 {
	if c.Generator == nil || len(c.Generator.ServerCPUSeconds) == 0 || c.Acquires == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range c.Generator.ServerCPUSeconds {
		s += v
	}
	return s * 1e6 / float64(c.Acquires)
}

// lockbenchCPUPerAcquire is lockbench's CPU per acquisition in µs, NaN
// where unknown.
func lockbenchCPUPerAcquire(c Cell) float64 {
	if c.Generator == nil || c.Generator.CPUSeconds == 0 || c.Acquires == 0 {
		return math.NaN()
	}
	return c.Generator.CPUSeconds * 1e6 / float64(c.Acquires)
}
