package metrics

import (
	"github.com/lockbench/lockbench/engine"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockbench/lockbench/plan"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// cellState is what the exporter already added to a cell's counters, so
// that snapshots (running totals) become increments.
type cellState struct {
	labels []string
	added  map[string]int64
	// base is the clients' counters at the first progress snapshot after
	// the warm-up: what the cell's counters are counted from while it runs.
	base *result.Counts
}

// liveCounts are the counters progress snapshots carry (see
// engine.Progress.Counts), by metric.
var liveCounts = map[string]func(c result.Counts) int64{
	Retries:        func(c result.Counts) int64 { return c.Retries },
	Notifications:  func(c result.Counts) int64 { return c.Notifications },
	Wakeups:        func(c result.Counts) int64 { return c.Wakeups },
	ReleaseWakeups: func(c result.Counts) int64 { return c.ReleaseWakeups },
	RoundTrips:     func(c result.Counts) int64 { return c.RoundTrips },
}

// counterHelp are the per-cell counters and what each counts.
var counterHelp = map[string]string{
	Acquisitions:   "Measured acquisitions (live; summary.json's acquires once the cell ends).",
	Errors:         "Acquire and release errors of every class (live; summary.json's errors once the cell ends).",
	Retries:        "Acquire attempts that did not get the lock (live from the first second after the warm-up; summary.json's once the cell ends).",
	Notifications:  "Server-pushed events the clients received (live from the first second after the warm-up; summary.json's once the cell ends).",
	Wakeups:        "Notifications a waiting client acted on (live from the first second after the warm-up; summary.json's once the cell ends).",
	ReleaseWakeups: "Wake-ups whose re-read showed a node gone (live from the first second after the warm-up; summary.json's once the cell ends).",
	RoundTrips:     "Requests sent to the servers (live from the first second after the warm-up; summary.json's once the cell ends).",
	Abandonments:   "Acquisitions given up (acquire timeout, the abandon scenario; live; summary.json's once the cell ends).",
	Renewals:       "Lease renewals sent (--renew; set when the cell ends).",
	Violations:     "Overlapping holders and fencing-token regressions seen (set when the cell ends).",
}

// finalCounts reads each counter's figure from a cell's result.
var finalCounts = map[string]func(c result.Cell) int64{
	Acquisitions:   func(c result.Cell) int64 { return c.Acquires },
	Errors:         func(c result.Cell) int64 { return c.Errors },
	Retries:        func(c result.Cell) int64 { return c.Retries },
	Notifications:  func(c result.Cell) int64 { return c.Notifications },
	Wakeups:        func(c result.Cell) int64 { return c.Wakeups },
	ReleaseWakeups: func(c result.Cell) int64 { return c.ReleaseWakeups },
	RoundTrips:     func(c result.Cell) int64 { return c.RoundTrips },
	Abandonments: func(c result.Cell) int64 {
		if c.Abandon == nil {
			return 0
		}
		return c.Abandon.Count
	},
	Renewals: func(c result.Cell) int64 {
		if c.Renew == nil {
			return 0
		}
		return c.Renew.Count
	},
	Violations: func(c result.Cell) int64 { return c.SafetyViolations },
}

// latencyBuckets are the classic buckets served beside the native ones,
// for Prometheus servers without native histograms: 10µs to 10s, 1-2.5-5
// a decade, bounds a reader can say.
var latencyBuckets = []float64{10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6,
	1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1, 2.5, 5, 10}

func (e *Exporter) register() {
	e.counters = map[string]*prometheus.CounterVec{}
	for name, help := range counterHelp {
		e.counters[name] = prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, cellLabels)
		e.reg.MustRegister(e.counters[name])
	}
	e.errorsByClass = prometheus.NewCounterVec(prometheus.CounterOpts{Name: ErrorsByClass,
		Help: "Errors by class (no_quorum, timeout, …), set when the cell ends."}, append([]string{"class"}, cellLabels...))
	e.reg.MustRegister(e.errorsByClass)
	gauge := func(name, help string, extra ...string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, append(extra, cellLabels...))
		e.reg.MustRegister(g)
		return g
	}
	e.holding = gauge(Holding, "Clients holding the lock at the last progress snapshot.")
	e.waiting = gauge(Waiting, "Clients inside an acquire at the last progress snapshot.")
	e.running = gauge(Running, "1 while the cell runs, 0 once it has ended.")
	e.cpuShare = gauge(GeneratorCPU, "lockbench's CPU over the cell as a share of all cores (set when the cell ends).")
	e.lag = gauge(ScheduleLag, "Open loop: the generator's send lag behind schedule, by quantile (set when the cell ends).", "quantile")
	hist := func(name, help string) *latencyVec {
		h := newLatencyVec(name, help)
		e.reg.MustRegister(h)
		return h
	}
	e.acquire = hist(AcquireLatency, "Acquire latency of measured acquisitions, fed each second as the interval closes.")
	e.release = hist(ReleaseLatency, "Release latency, fed each second as the interval closes.")
}

// Attach has e observe p: it chains its own hooks after any p already has.
func (e *Exporter) Attach(p *plan.Plan) {
	onRunID, onCell, onProgress, onInterval, onResult := p.OnRunID, p.OnCell, p.OnProgress, p.OnInterval, p.OnResult
	p.OnRunID = func(id string) {
		if onRunID != nil {
			onRunID(id)
		}
		e.SetRunID(id)
	}
	p.OnCell = func(i, n int, spec engine.CellSpec) {
		if onCell != nil {
			onCell(i, n, spec)
		}
		e.CellStarted(spec.Impl, spec.Scenario.Name(), spec.Clients)
	}
	// A ramp's stairs report progress under the ramp's largest client
	// count, not their own: counted live, a stair's figures would land on
	// another stair's series. Its counters come with each stair's result.
	ramp := p.Ramp != nil
	p.OnProgress = func(i, n int, spec engine.CellSpec, pr engine.Progress) {
		if onProgress != nil {
			onProgress(i, n, spec, pr)
		}
		if !ramp {
			e.Progress(spec.Impl, spec.Scenario.Name(), spec.Clients, pr)
		}
	}
	p.OnInterval = func(c result.Cell, start time.Time, iv hlog.Interval) {
		if onInterval != nil {
			onInterval(c, start, iv)
		}
		e.Interval(c, iv)
	}
	p.OnResult = func(c result.Cell) {
		if onResult != nil {
			onResult(c)
		}
		e.Result(c)
	}
}

// SetRunID labels the series of the cells to come with the run's ID.
func (e *Exporter) SetRunID(id string) {
	e.mu.Lock()
	e.runID = id
	e.mu.Unlock()
}

// cell returns a cell's state, made on first sight. e.mu must be held.
func (e *Exporter) cell(impl, scenario string, clients int) *cellState {
	labels := []string{impl, scenario, strconv.Itoa(clients), e.shard, e.runID}
	key := strings.Join(labels, "\x00")
	s := e.cells[key]
	if s == nil {
		s = &cellState{labels: labels, added: map[string]int64{}}
		e.cells[key] = s
	}
	return s
}

// raise brings a cell's counter up to total; a counter never goes down.
func (e *Exporter) raise(s *cellState, name string, total int64) {
	if d := total - s.added[name]; d > 0 {
		e.counters[name].WithLabelValues(s.labels...).Add(float64(d))
		s.added[name] = total
	} else if _, seen := s.added[name]; !seen {
		e.counters[name].WithLabelValues(s.labels...) // served as 0
		s.added[name] = 0
	}
}

// CellStarted marks a cell running and serves its counters at 0.
func (e *Exporter) CellStarted(impl, scenario string, clients int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.cell(impl, scenario, clients)
	e.running.WithLabelValues(s.labels...).Set(1)
	// Every counter is served from 0 as the cell starts, so that
	// increase() over the run sees it begin.
	for name := range counterHelp {
		e.raise(s, name, 0)
	}
}

// Progress takes a cell's progress snapshot: acquisitions, errors,
// abandonments, retries, notifications, wake-ups and round trips so far;
// clients holding and waiting.
func (e *Exporter) Progress(impl, scenario string, clients int, p engine.Progress) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.cell(impl, scenario, clients)
	e.raise(s, Acquisitions, p.Acquires)
	e.raise(s, Errors, p.Errors)
	e.raise(s, Abandonments, p.Abandons)
	if !p.Warmup {
		// Counted from the first snapshot after the warm-up, which is
		// after the result's base: never more than the result says.
		if s.base == nil {
			s.base = &p.Counts
		}
		for name, f := range liveCounts {
			e.raise(s, name, f(p.Counts)-f(*s.base))
		}
	}
	e.holding.WithLabelValues(s.labels...).Set(float64(p.Holding))
	e.waiting.WithLabelValues(s.labels...).Set(float64(p.Waiting))
}

// Interval feeds a closed second's acquire and release latencies into the
// histograms.
func (e *Exporter) Interval(c result.Cell, iv hlog.Interval) {
	e.mu.Lock()
	labels := e.cell(c.Impl, c.Scenario, c.Clients).labels
	e.mu.Unlock()
	e.acquire.add(labels, iv.Acquire)
	e.release.add(labels, iv.Release)
}

// Result sets a cell's counters to its final figures — summary.json's —
// and marks it ended.
func (e *Exporter) Result(c result.Cell) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.cell(c.Impl, c.Scenario, c.Clients)
	for name, f := range finalCounts {
		e.raise(s, name, f(c))
	}
	for class, n := range c.ErrorsByClass {
		e.errorsByClass.WithLabelValues(append([]string{class}, s.labels...)...).Add(float64(n))
	}
	e.holding.WithLabelValues(s.labels...).Set(0)
	e.waiting.WithLabelValues(s.labels...).Set(0)
	e.running.WithLabelValues(s.labels...).Set(0)
	if g := c.Generator; g != nil {
		e.cpuShare.WithLabelValues(s.labels...).Set(g.CPUShare)
	}
	if o := c.Open; o != nil {
		for q, us := range map[string]float64{"0.5": o.ScheduleLagUs.P50, "0.99": o.ScheduleLagUs.P99, "1": o.ScheduleLagUs.Max} {
			e.lag.WithLabelValues(append([]string{q}, s.labels...)...).Set(us / 1e6)
		}
	}
	e.finalAt.Store(e.scrapes.Load())
	e.finished.Store(true)
}
