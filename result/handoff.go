package result

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// HandoffCost is what one hand-off of a burst cost, in the units a user
// pays: wake-ups and notifications, the messages the server handled, the
// CPU it and lockbench spent, and how long the lock stood free between a
// release and the next grant. A burst of n clients on one lock hands the
// lock on n−1 times; every figure but the gap is the cell's total over
// those hand-offs, so the queueing before the first release is shared out
// too (it is part of what each hand-off's waiter cost).
type HandoffCost struct {
	Handoffs      int64   `json:"handoffs"`
	Wakeups       float64 `json:"wakeups"`       // release wake-ups per hand-off
	Notifications float64 `json:"notifications"` // notifications the clients received, per hand-off
	// Theory is the wake-ups per hand-off the driver's theory predicts,
	// nil without one.
	Theory *float64 `json:"theory,omitempty"`
	// Messages is what the servers handled per hand-off, in MessagesUnit
	// ("packets", "commands + pushes", "gRPC messages"); nil when the
	// server kind counts none.
	Messages     *float64 `json:"messages,omitempty"`
	MessagesUnit string   `json:"messages_unit,omitempty"`
	// ServerCPUUs is the servers' CPU time per hand-off, in µs, above
	// what they use at rest when that was read (ServerIdleUs): the cost
	// of the hand-offs themselves, not of a JVM's compiler or collector
	// running beside them. Nil when the servers' processes could not be
	// seen (their CPU is unknown), or when the cell used less than the
	// servers' rate at rest accounts for.
	ServerCPUUs *float64 `json:"server_cpu_us,omitempty"`
	// ServerCPUTotalUs is all the servers' CPU per hand-off over the
	// cell, and ServerIdleUs the part of it their rate at rest accounts
	// for; nil when either was not read.
	ServerCPUTotalUs *float64 `json:"server_cpu_total_us,omitempty"`
	ServerIdleUs     *float64 `json:"server_idle_us,omitempty"`
	// GeneratorCPUUs is lockbench's own CPU time per hand-off, in µs.
	GeneratorCPUUs *float64 `json:"lockbench_cpu_us,omitempty"`
	// GapUs is the hand-off gap (release → next grant); nil when none was
	// measured.
	GapUs *Latency `json:"-"` // in the cell already: handoff_gap_us
}

// HandoffCosts derives c's cost per hand-off; false unless c is a burst
// on one lock with at least one hand-off. A repeated burst of n clients
// hands on n−1 times per repeat.
func HandoffCosts(c Cell) (HandoffCost, bool) {
	// A queue that waiters left (the abandon scenario, a burst by kind)
	// hands on fewer times than it had clients: no burst's cost.
	if c.KindOf() != KindBurst || c.Locks > 1 || c.Acquires < 2 || c.Abandon != nil && c.Abandon.Count > 0 {
		return HandoffCost{}, false
	}
	h := HandoffCost{Handoffs: c.Acquires - int64(max(c.Repeats, 1))}
	if h.Handoffs <= 0 {
		return HandoffCost{}, false
	}
	per := func(x float64) float64 { return x / float64(h.Handoffs) }
	h.Wakeups = per(float64(c.ReleaseWakeups))
	h.Notifications = per(float64(c.Notifications))
	if t := c.TheoryOf(); t != nil && c.Clients >= 2 {
		w := t.Burst(float64(c.Clients)) / float64(c.Clients-1)
		h.Theory = &w
	}
	if n, unit, ok := c.ServerCounts.Handled(); ok {
		m := per(float64(n))
		h.Messages, h.MessagesUnit = &m, unit
	}
	if g := c.Generator; g != nil {
		if len(g.ServerCPUSeconds) > 0 {
			var s float64
			for _, v := range g.ServerCPUSeconds {
				s += v
			}
			total := per(s * 1e6)
			h.ServerCPUUs = &total
			if g.ServerIdleCores != nil {
				idle := per(*g.ServerIdleCores * g.ServerSpanS * 1e6)
				h.ServerCPUTotalUs, h.ServerIdleUs = &total, &idle
				// Below the rest rate, the background moved more than the
				// hand-offs cost: the cost is not known, not negative.
				if above := total - idle; above >= 0 {
					h.ServerCPUUs = &above
				} else {
					h.ServerCPUUs = nil
				}
			}
		}
		if g.CPUSeconds > 0 {
			us := per(g.CPUSeconds * 1e6)
			h.GeneratorCPUUs = &us
		}
	}
	h.GapUs = c.HandoffGapUs
	return h, true
}

// Growth is how a cost grows with the number of clients n: the exponent
// b of cost ≈ a·n^b, fitted by least squares on log–log axes, with its
// 95 % confidence interval (Student's t on n−2 degrees of freedom; with
// two points the interval is unknown, NaN).
type Growth struct {
	Exponent, Low, High float64
	Points              int
}

// FitGrowth fits the growth of ys (costs, > 0) over xs (client counts);
// false with fewer than two usable points or one client count only.
func FitGrowth(xs, ys []float64) (Growth, bool) {
	var lx, ly []float64
	for i := range xs {
		if xs[i] > 0 && ys[i] > 0 && !math.IsInf(ys[i], 0) {
			lx, ly = append(lx, math.Log(xs[i])), append(ly, math.Log(ys[i]))
		}
	}
	if len(lx) < 2 || slices.Min(lx) == slices.Max(lx) {
		return Growth{}, false
	}
	_, b := stat.LinearRegression(lx, ly, nil, false)
	g := Growth{Exponent: b, Low: math.NaN(), High: math.NaN(), Points: len(lx)}
	if df := len(lx) - 2; df > 0 {
		var ss float64
		mx := stat.Mean(lx, nil)
		for i := range lx {
			a := stat.Mean(ly, nil) - b*mx
			r := ly[i] - (a + b*lx[i])
			ss += r * r
		}
		var sxx float64
		for _, x := range lx {
			sxx += (x - mx) * (x - mx)
		}
		se := math.Sqrt(ss / float64(df) / sxx)
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.975)
		g.Low, g.High = b-t*se, b+t*se
	}
	return g, true
}
