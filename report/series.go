package report

import (
	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"

	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// The plotted data is computed here by plain functions, apart from the
// drawing in plots.go, so tests can check what a plot shows without
// looking at pixels.

// series is one line of a plot. Impl and Scenario choose its colour and
// dash; a Theory line is drawn thin, grey and dashed instead.
type series struct {
	Label          string
	Impl, Scenario string
	Theory         bool
	// Alt draws the series dotted, to tell a second quantity of the same
	// implementation and scenario apart (retries beside notifications).
	Alt bool
	XYs plotter.XYs
	// PointLabels, if set, annotate each point (e.g. its client count).
	PointLabels []string
	// Mark, if > 0, gives the series a hollow marker of its own, the
	// larger the lower its number: where series coincide (a herd's
	// wake-ups, n/2 for every watch-all lock) the markers nest instead of
	// hiding one another.
	Mark int
	// Errs, if as long as XYs, are each point's 95 % interval as
	// distances below and above it, drawn as error bars.
	Errs plotter.YErrors
}

// withIntervals gives each point of ss whose cell was measured in rounds
// the interval of its estimate (in the point's unit, scale × the
// estimate's), matching points by implementation, scenario and x; a point
// without one gets none.
func withIntervals(ss []series, cells []Cell, x func(Cell) float64, est func(*result.RoundFigures) result.Estimate, scale float64) []series {
	for i, s := range ss {
		errs := make(plotter.YErrors, len(s.XYs))
		any := false
		for j, p := range s.XYs {
			for _, c := range cells {
				if c.Impl != s.Impl || c.Scenario != s.Scenario || x(c) != p.X || c.Rounds == nil {
					continue
				}
				if e := est(c.Rounds); e.HasInterval() {
					errs[j].Low, errs[j].High = max(0, p.Y-scale*e.Low), max(0, scale*e.High-p.Y)
					any = true
				}
			}
		}
		if any {
			ss[i].Errs = errs
		}
	}
	return ss
}

// ninesX maps a quantile (0 ≤ q < 1) to the spectrum plot's x axis:
// 1/(1−q), so that on a log axis 90%, 99%, 99.9% … are evenly spaced.
func ninesX(q float64) float64 { return 1 / (1 - q) }

// ninesTicks labels the spectrum's x axis from 0% (x = 1) up to
// ninesMax(maxX): 90%, 99%, 99.9%, …, with minor ticks between.
func ninesTicks(maxX float64) []plot.Tick {
	ticks := []plot.Tick{{Value: 1, Label: "0%"}}
	top := ninesMax(maxX)
	for k := 1; math.Pow10(k) <= top; k++ {
		for m := 2; m < 10; m++ {
			ticks = append(ticks, plot.Tick{Value: math.Pow10(k-1) * float64(m)})
		}
		ticks = append(ticks, plot.Tick{Value: math.Pow10(k), Label: ninesLabel(k)})
	}
	return ticks
}

// ninesMax is the end of the spectrum's x axis: the first power of ten
// at or above maxX, and at least 10 (90%).
func ninesMax(maxX float64) float64 {
	return max(10, math.Pow10(int(math.Ceil(math.Log10(max(maxX, 1))-1e-9))))
}

// ninesLabel is the percentile with k nines: 1 → "90%", 3 → "99.9%".
func ninesLabel(k int) string {
	switch k {
	case 1:
		return "90%"
	case 2:
		return "99%"
	}
	return "99." + strings.Repeat("9", k-2) + "%"
}

// spectrumSeries is a cell's latency percentile spectrum in milliseconds
// against ninesX. From the merged histogram when there is one; the last
// point, the maximum, sits at x = count (q = 1−1/count, the finest
// quantile the data resolves). Without a histogram it falls back to the
// summary's quantiles.
func spectrumSeries(c Cell, h *hdrhistogram.Histogram) plotter.XYs {
	var xys plotter.XYs
	add := func(x, us float64) {
		if us <= 0 || x < 1 || (len(xys) > 0 && x <= xys[len(xys)-1].X) {
			return
		}
		xys = append(xys, plotter.XY{X: x, Y: us / 1000})
	}
	if h != nil && h.TotalCount() > 0 {
		n := float64(h.TotalCount())
		for _, b := range h.CumulativeDistributionWithTicks(5) {
			q := b.Quantile / 100
			x := n
			if q < 1 {
				x = min(ninesX(q), n)
			}
			add(x, float64(b.ValueAt))
		}
		add(n, float64(h.Max()))
		return xys
	}
	l := c.AcquireLatencyUs
	add(ninesX(0.5), l.P50)
	add(ninesX(0.9), l.P90)
	add(ninesX(0.99), l.P99)
	add(ninesX(0.999), l.P999)
	add(float64(c.Acquires), l.Max)
	return xys
}

// latencySeries gives, per scenario, the spectrum of the largest client
// count of each implementation.
func latencySeries(cells []Cell, logs map[string]*CellDigest) map[string][]series {
	out := map[string][]series{}
	for _, g := range result.GroupCells(cells) {
		c, ok := largestMeasured(g.Cells)
		if !ok {
			continue
		}
		xys := spectrumSeries(c, logs[c.Key()].Merged(result.TagAcquire))
		if len(xys) == 0 {
			continue
		}
		out[g.Scenario] = append(out[g.Scenario], series{
			Label: fmt.Sprintf("%s (%s)", g.Impl, plural(int64(c.Clients), "client")),
			Impl:  g.Impl, Scenario: g.Scenario, XYs: xys,
		})
	}
	return out
}

// perGroup builds one series per implementation and scenario from a value
// of each cell; points where ok is false (or x, y ≤ 0 on a log axis) are
// left out, and so are series left without points.
func perGroup(cells []Cell, label string, point func(Cell) (x, y float64, ok bool)) []series {
	var out []series
	for _, g := range result.GroupCells(cells) {
		s := series{Label: g.Impl + "/" + g.Scenario + label, Impl: g.Impl, Scenario: g.Scenario}
		for _, c := range g.Cells {
			if x, y, ok := point(c); ok {
				s.XYs = append(s.XYs, plotter.XY{X: x, Y: y})
			}
		}
		if len(s.XYs) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// throughputSeries is acquisitions per second against clients, with the
// rounds' intervals where measured in rounds.
func throughputSeries(cells []Cell) []series {
	return withIntervals(perGroup(cells, "", func(c Cell) (float64, float64, bool) {
		return float64(c.Clients), c.AcquiresPerS, c.Acquires > 0
	}), cells, clientsX, func(r *result.RoundFigures) result.Estimate { return r.AcquiresPerS }, 1)
}

// p99Series is p99 acquire latency in milliseconds against clients, with
// the rounds' intervals where measured in rounds.
func p99Series(cells []Cell) []series {
	return withIntervals(perGroup(cells, "", func(c Cell) (float64, float64, bool) {
		return float64(c.Clients), c.AcquireLatencyUs.P99 / 1000, c.Acquires > 0 && c.AcquireLatencyUs.P99 > 0
	}), cells, clientsX, func(r *result.RoundFigures) result.Estimate { return r.P99 }, 1.0/1000)
}

func clientsX(c Cell) float64 { return float64(c.Clients) }

// p99ThroughputSeries is p99 in milliseconds against acquisitions per
// second, one point per client count, labelled with it.
func p99ThroughputSeries(cells []Cell) []series {
	out := perGroup(cells, "", func(c Cell) (float64, float64, bool) {
		return c.AcquiresPerS, c.AcquireLatencyUs.P99 / 1000, c.Acquires > 0 && c.AcquireLatencyUs.P99 > 0
	})
	for i, s := range out {
		for _, c := range cellsOf(cells, s.Impl, s.Scenario) {
			if c.Acquires > 0 && c.AcquireLatencyUs.P99 > 0 {
				out[i].PointLabels = append(out[i].PointLabels, fmt.Sprintf("n=%d", c.Clients))
			}
		}
	}
	return out
}

// cellsOf returns the cells of one implementation and scenario by
// ascending client count.
func cellsOf(cells []Cell, impl, scenario string) []Cell {
	for _, g := range result.GroupCells(cells) {
		if g.Impl == impl && g.Scenario == scenario {
			return g.Cells
		}
	}
	return nil
}

// perAcquireSeries is, for closed loops, notifications per acquisition
// against clients, and retries per acquisition for implementations that
// retry; theory adds n−1 when some implementation's waiters all watch
// every change and 1 when some watch their predecessor, over n ≥ 2.
func perAcquireSeries(cells []Cell) (measured, theory []series) {
	loop := closedLoops(cells)
	// Theory predicts release wake-ups: where an implementation counts
	// them apart, they are what is drawn against it, not every
	// notification (arrivals wake watchers too).
	var released, notified []Cell
	for _, c := range loop {
		if c.ReleaseWakeups > 0 || c.TheoryOf() != nil {
			released = append(released, c)
		} else {
			notified = append(notified, c)
		}
	}
	notif := perGroup(notified, " notifications", func(c Cell) (float64, float64, bool) {
		return float64(c.Clients), c.NotificationsPerAcquire, c.Acquires > 0 && c.NotificationsPerAcquire > 0
	})
	notif = append(notif, perGroup(released, " release wake-ups", func(c Cell) (float64, float64, bool) {
		if c.Wake == nil {
			return float64(c.Clients), 0, false
		}
		return float64(c.Clients), c.Wake.PerAcquire, c.Acquires > 0
	})...)
	retries := perGroup(loop, " retries", func(c Cell) (float64, float64, bool) {
		return float64(c.Clients), c.RetriesPerAcquire, c.Acquires > 0 && c.RetriesPerAcquire > 0
	})
	for i := range retries {
		retries[i].Alt = true
	}
	measured = append(notif, retries...)
	if len(measured) == 0 {
		return nil, nil
	}
	var theories []result.Theory
	var ns []int
	for _, c := range loop {
		if w := wakingOf(c.Impl, cells); w.theory != nil && c.Locks <= 1 && !slices.Contains(theories, *w.theory) {
			theories = append(theories, *w.theory)
		}
		if c.Clients >= 2 && !slices.Contains(ns, c.Clients) {
			ns = append(ns, c.Clients)
		}
	}
	slices.Sort(ns)
	if len(ns) == 0 {
		return measured, nil
	}
	for _, t := range theories {
		theory = append(theory, theoryLine("theory "+t.PerHandoffFormula+" ("+t.Waiters+")", ns, t.PerHandoff))
	}
	return measured, theory
}

// burstCostSeries is, per lock with bursts on one lock, its cost per
// hand-off against clients: release wake-ups, the servers' CPU (µs) and
// the hand-off gap's p50 (µs); and theory's wake-ups per hand-off, one
// dashed line per waiting scheme. A cost ≤ 0 has no point on a log axis.
func burstCostSeries(cells []Cell) (wakes, cpu, gap, theory []series) {
	var ns []int
	var theories []result.Theory
	for i, b := range burstsWithCosts(cells) {
		w := series{Impl: b[0].Impl, Scenario: "burst", Label: b[0].Impl, Mark: i + 1}
		sc, sg := w, w
		for _, c := range b {
			h := *c.Handoff
			x := float64(c.Clients)
			if h.Wakeups > 0 {
				w.XYs = append(w.XYs, plotter.XY{X: x, Y: h.Wakeups})
			}
			if h.ServerCPUUs != nil && *h.ServerCPUUs > 0 {
				sc.XYs = append(sc.XYs, plotter.XY{X: x, Y: *h.ServerCPUUs})
			}
			if h.GapUs != nil && h.GapUs.P50 > 0 {
				sg.XYs = append(sg.XYs, plotter.XY{X: x, Y: h.GapUs.P50})
			}
			if t := c.TheoryOf(); t != nil && !slices.Contains(theories, *t) {
				theories = append(theories, *t)
			}
			if !slices.Contains(ns, c.Clients) {
				ns = append(ns, c.Clients)
			}
		}
		for _, p := range []struct {
			s   series
			out *[]series
		}{{w, &wakes}, {sc, &cpu}, {sg, &gap}} {
			if len(p.s.XYs) > 0 {
				*p.out = append(*p.out, p.s)
			}
		}
	}
	slices.Sort(ns)
	if len(wakes) == 0 || len(ns) == 0 || ns[0] < 2 {
		return wakes, cpu, gap, nil
	}
	// One dashed line per formula: several waiting schemes share one
	// (every watch-all lock's n(n−1)/2), and 0 has no place on a log axis.
	var formulas []string
	for _, t := range theories {
		if slices.Contains(formulas, t.Formula) || t.Burst(float64(ns[len(ns)-1])) <= 0 {
			continue
		}
		formulas = append(formulas, t.Formula)
		theory = append(theory, theoryLine("theory "+t.Formula+" over n−1 hand-offs", ns, func(n float64) float64 { return t.Burst(n) / (n - 1) }))
	}
	return wakes, cpu, gap, theory
}

// openLoopSeries is, for open loops, the achieved acquisitions per second
// against clients, each point labelled with the share of arrivals dropped,
// and the offered rate as a flat reference line.
func openLoopSeries(cells []Cell) (achieved, offered []series) {
	var open []Cell
	for _, c := range cells {
		if c.KindOf() == result.KindOpen && c.Open != nil && c.Acquires > 0 {
			open = append(open, c)
		}
	}
	achieved = perGroup(open, " achieved", func(c Cell) (float64, float64, bool) {
		return float64(c.Clients), c.AcquiresPerS, true
	})
	if len(achieved) == 0 {
		return nil, nil
	}
	var rates []float64
	for i, s := range achieved {
		for _, c := range cellsOf(open, s.Impl, s.Scenario) {
			o := c.Open
			label := "kept up"
			if judge.Saturated(c) {
				label = fmt.Sprintf("%.0f%% dropped", 100*float64(o.Dropped)/float64(max(o.Offered, 1)))
			}
			achieved[i].PointLabels = append(achieved[i].PointLabels, label)
			if !slices.Contains(rates, o.Rate) {
				rates = append(rates, o.Rate)
			}
		}
	}
	xmin, xmax := math.Inf(1), 0.0
	for _, c := range open {
		xmin, xmax = min(xmin, float64(c.Clients)), max(xmax, float64(c.Clients))
	}
	for _, r := range rates {
		offered = append(offered, series{Label: fmt.Sprintf("offered %s/s", commas(round(r))), Theory: true,
			XYs: plotter.XYs{{X: xmin, Y: r}, {X: xmax, Y: r}}})
	}
	return achieved, offered
}

// theoryLine evaluates f at the measured client counts and, between them,
// at log-spaced points, so a curve looks like one on a log axis.
func theoryLine(label string, ns []int, f func(float64) float64) series {
	s := series{Label: label, Theory: true}
	lo, hi := float64(ns[0]), float64(ns[len(ns)-1])
	xs := []float64{lo}
	for x := lo * 1.25; x < hi; x *= 1.25 {
		xs = append(xs, x)
	}
	if hi > lo {
		xs = append(xs, hi)
	}
	for _, x := range xs {
		if y := f(x); y > 0 {
			s.XYs = append(s.XYs, plotter.XY{X: x, Y: y})
		}
	}
	return s
}

// timelineSeries gives, per scenario, the acquisitions per second and the
// p99 (ms) in each interval of the largest client count of each
// implementation, from the .hlog; a cell needs two intervals to be a line.
// In a ramp every stair is drawn, one after another on one line per
// implementation, and stairs marks where each began.
func timelineSeries(cells []Cell, logs map[string]*CellDigest, ramp bool) (perS, p99 map[string][]series, stairs map[string][]stairMark) {
	perS, p99, stairs = map[string][]series{}, map[string][]series{}, map[string][]stairMark{}
	for _, g := range result.GroupCells(cells) {
		c, ok := largestMeasured(g.Cells)
		if !ok {
			continue
		}
		label := fmt.Sprintf("%s (%s)", g.Impl, plural(int64(c.Clients), "client"))
		run := []Cell{c}
		if ramp && len(g.Cells) > 1 {
			run = g.Cells
			label = fmt.Sprintf("%s (ramp %d→%d clients)", g.Impl, g.Cells[0].Clients, g.Cells[len(g.Cells)-1].Clients)
		}
		rate := series{Label: label, Impl: g.Impl, Scenario: g.Scenario}
		lat := rate
		var marks []stairMark
		offset := 0.0
		for _, stair := range run {
			marks = append(marks, stairMark{X: offset, Clients: stair.Clients})
			for _, st := range logs[stair.Key()].IntervalStats(result.TagAcquire) {
				rate.XYs = append(rate.XYs, plotter.XY{X: offset + st.MidS, Y: st.PerS})
				if st.P99 > 0 {
					lat.XYs = append(lat.XYs, plotter.XY{X: offset + st.MidS, Y: st.P99 / 1000})
				}
			}
			// Stairs run back to back: the next begins as this one ends.
			offset += stair.DurationS
		}
		if len(rate.XYs) < 2 {
			continue
		}
		perS[g.Scenario] = append(perS[g.Scenario], rate)
		if len(lat.XYs) > 0 {
			p99[g.Scenario] = append(p99[g.Scenario], lat)
		}
		if len(marks) > 1 && len(stairs[g.Scenario]) == 0 {
			stairs[g.Scenario] = marks
		}
	}
	return perS, p99, stairs
}

// stairMark is where a ramp's stair began on the timeline, and its
// client count.
type stairMark struct {
	X       float64
	Clients int
}

// fairnessSeries is the Lorenz curve of acquisitions over clients: the
// share of all acquisitions held by the least served fraction of clients;
// the diagonal is perfect fairness. Jain's index is the cell's own
// (result.FairnessOf derives it).
func fairnessSeries(perClient []float64) plotter.XYs {
	n := len(perClient)
	if n == 0 {
		return nil
	}
	xs := slices.Clone(perClient)
	slices.Sort(xs)
	var sum float64
	for _, x := range xs {
		sum += x
	}
	if sum <= 0 {
		return nil
	}
	lorenz := plotter.XYs{{X: 0, Y: 0}}
	var acc float64
	for i, x := range xs {
		acc += x
		lorenz = append(lorenz, plotter.XY{X: float64(i+1) / float64(n), Y: acc / sum})
	}
	return lorenz
}

// fairnessSeriesOf gives, per scenario, the Lorenz curve of the largest
// client count of each implementation whose cell carries acquisitions per
// client (Cell.Fairness); cells from before it existed have none.
func fairnessSeriesOf(cells []Cell) map[string][]series {
	out := map[string][]series{}
	for _, g := range result.GroupCells(cells) {
		for i := len(g.Cells) - 1; i >= 0; i-- {
			c := g.Cells[i]
			if c.Fairness == nil || len(c.Fairness.PerClient) < 2 {
				continue
			}
			f := make([]float64, len(c.Fairness.PerClient))
			for j, x := range c.Fairness.PerClient {
				f[j] = float64(x)
			}
			l := fairnessSeries(f)
			if l == nil {
				continue
			}
			out[g.Scenario] = append(out[g.Scenario], series{
				Label: fmt.Sprintf("%s (%s, Jain %.3f)", g.Impl, plural(int64(c.Clients), "client"), c.Fairness.Jain),
				Impl:  g.Impl, Scenario: g.Scenario, XYs: l,
			})
			break
		}
	}
	return out
}

// burstsWithCosts is, per lock with bursts on one lock, its bursts that
// have a cost per hand-off, by client count (waiters who left a queue
// aside: they follow no burst curve).
func burstsWithCosts(cells []Cell) [][]Cell {
	var out [][]Cell
	for _, g := range result.GroupCells(result.WithoutFaults(cells)) {
		if !isBurst(g.Cells[0]) {
			continue
		}
		var b []Cell
		for _, c := range g.Cells {
			if c.Handoff != nil && !leavingQueue(c) {
				b = append(b, c)
			}
		}
		if len(b) > 0 {
			out = append(out, b)
		}
	}
	return out
}
