package suite

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/lockbench/lockbench/result"
)

// Figure is one number of one lock in one workload: a point, the interval
// around it and the rounds it came from where the workload measured it
// in rounds, and the cell it came from.
type Figure struct {
	Column
	Impl      string
	Point     float64
	Low, High float64 // 0, 0 without an interval
	Rounds    []float64
	// Safety marks a count of the cell's safety checks (violations, lost
	// updates): a renderer asks judge whether the cell was unsafe.
	Safety bool
	// Bad and Why are the renderer's mark of a finding against the lock
	// (judge's), and its words.
	Bad bool
	Why string
	// Evidence is the workload's report, relative to the bundle.
	Evidence string
	Cell     string
}

// Column names a figure: which workload, which figure, at how many
// clients; Unit says how to print it; Lower says smaller is better.
type Column struct {
	Workload string
	Name     string
	Clients  int
	Unit     string
	Lower    bool
}

// Key names the column, for joining figures of two bundles.
func (c Column) Key() string { return fmt.Sprintf("%s/%s/%d", c.Workload, c.Name, c.Clients) }

// The units figures are printed in.
const (
	UnitUs    = "µs"
	UnitMs    = "ms"
	UnitRate  = "/s"
	UnitCount = ""
	UnitRatio = "×"
	// UnitIndex is a unitless index on a fixed scale (Jain's fairness,
	// 0 to 1), printed with its two decimals even where it is whole.
	UnitIndex = "index"
)

// Results is one workload's cells as the bundle holds them; From[i] is
// the results directory cell i came from, relative to the bundle.
type Results struct {
	Run   Run
	Cells []result.Cell
	From  []string
	Err   error
}

// ReadResults reads every workload's summary.json in the bundle at dir.
func ReadResults(dir string, b *Bundle) []Results {
	var out []Results
	for _, r := range b.Workloads {
		w := Results{Run: r}
		for _, src := range r.Sources() {
			sum, err := result.ReadSummary(filepath.Join(dir, src, result.SummaryFile))
			if err != nil {
				w.Err = errors.Join(w.Err, err)
				continue
			}
			for _, c := range sum.Cells {
				w.Cells, w.From = append(w.Cells, c), append(w.From, src)
			}
		}
		out = append(out, w)
	}
	return out
}

// FiguresOf is every figure the workloads' cells give, per cell kind:
// latency and throughput of the loops, the herd's cost per hand-off,
// a fault's recovery against its bound and what it cost the guarded
// register.
func FiguresOf(ws []Results) []Figure {
	var out []Figure
	for _, w := range ws {
		evidenceOf := func(i int) string { return filepath.ToSlash(filepath.Join(w.From[i], "report.html")) }
		out = append(out, marginals(w, evidenceOf)...)
		largest := map[string]int{} // workload, impl → its largest loop
		for _, c := range w.Cells {
			k := w.Run.Name + "\x00" + c.Impl
			largest[k] = max(largest[k], c.Clients)
		}
		for i, c := range w.Cells {
			evidence := evidenceOf(i)
			add := func(name, unit string, lower bool, point, low, high float64, bad bool) *Figure {
				if math.IsNaN(point) {
					return nil
				}
				out = append(out, Figure{Column: Column{w.Run.Name, name, c.Clients, unit, lower}, Impl: c.Impl,
					Point: point, Low: low, High: high, Bad: bad, Evidence: evidence, Cell: result.CellFile(c)})
				return &out[len(out)-1]
			}
			est := func(name, unit string, lower bool, e *result.Estimate, single float64) {
				if e != nil && len(e.Rounds) > 1 {
					add(name, unit, lower, e.Point, e.Low, e.High, false).Rounds = e.Rounds
				} else if single > 0 {
					add(name, unit, lower, single, 0, 0, false)
				}
			}
			switch c.KindOf() {
			case result.KindBurst:
				h, ok := result.HandoffCosts(c)
				if !ok {
					continue
				}
				add("wake-ups / hand-off", UnitCount, true, h.Wakeups, 0, 0, false)
				if c.HandoffGapUs != nil && c.HandoffGapUs.P50 > 0 {
					add("gap p50", UnitUs, true, c.HandoffGapUs.P50, 0, 0, false)
				}
			case result.KindWait:
				wc, ok := result.WaitCostOf(c)
				if !ok {
					continue
				}
				add("lockbench CPU / waiter-s", UnitUs, true, wc.LockbenchCPUUs, 0, 0, false)
				if wc.ServerCPUUs != nil {
					add("server CPU / waiter-s", UnitUs, true, *wc.ServerCPUUs, 0, 0, false)
				}
				add("requests / waiter-s", UnitCount, true, wc.Requests, 0, 0, false)
			case result.KindFault:
				f := c.Faults
				if f == nil {
					continue
				}
				if f.RecoveryMs != nil && f.RecoveryMs.Count > 0 {
					add(c.Scenario+": recovery p50", UnitMs, true, f.RecoveryMs.P50, 0, 0, false)
					if f.ConfiguredMs > 0 {
						add(c.Scenario+": recovery / bound", UnitRatio, true, f.RecoveryMs.P50/f.ConfiguredMs, 0, 0, false)
					}
				}
				if c.Safety != nil && c.Safety.Guarded {
					add(c.Scenario+": lost updates", UnitCount, true, float64(c.Safety.UsersLost()), 0, 0, false).Safety = true
				}
				add(c.Scenario+": violations", UnitCount, true, float64(c.SafetyViolations), 0, 0, false).Safety = true
			default:
				var r result.RoundFigures
				if c.Rounds != nil {
					r = *c.Rounds
				}
				// Alone, a lock's latency is the figure (its rate is one
				// client's round trips); contended, its rate and tail.
				if c.Clients == 1 {
					est("p50", UnitUs, true, pick(c.Rounds != nil, &r.P50), c.AcquireLatencyUs.P50)
				} else {
					est("acq/s", UnitRate, false, pick(c.Rounds != nil, &r.AcquiresPerS), c.AcquiresPerS)
				}
				est("p99", UnitUs, true, pick(c.Rounds != nil, &r.P99), c.AcquireLatencyUs.P99)
				if c.Fairness != nil && c.Clients == largest[w.Run.Name+"\x00"+c.Impl] && c.Clients > 1 {
					add("fairness (Jain)", UnitIndex, false, c.Fairness.Jain, 0, 0, false)
				}
			}
		}
	}
	return out
}

// marginals is each lock's herd cost in w: its server CPU per hand-off as
// the slope over its bursts of every size (result.MarginalCPU), not one
// burst's CPU over its hand-offs.
func marginals(w Results, evidenceOf func(int) string) []Figure {
	var out []Figure
	bursts := map[string][]result.Cell{}
	first := map[string]int{}
	var order []string
	for i, c := range w.Cells {
		if c.KindOf() == result.KindBurst {
			if bursts[c.Impl] == nil {
				order, first[c.Impl] = append(order, c.Impl), i
			}
			bursts[c.Impl] = append(bursts[c.Impl], c)
		}
	}
	for _, impl := range order {
		if e := result.MarginalCPU(bursts[impl]); e != nil {
			out = append(out, Figure{Column: Column{w.Run.Name, "server CPU / hand-off, marginal", 0, UnitUs, true}, Impl: impl,
				Point: e.Point, Low: e.Low, High: e.High, Evidence: evidenceOf(first[impl]), Cell: result.CellFile(bursts[impl][0])})
		}
	}
	return out
}

func pick(ok bool, e *result.Estimate) *result.Estimate {
	if ok {
		return e
	}
	return nil
}

// Columns is the figures' columns in the bundle's workload order, then by
// client count, then in the order figures were first given.
func Columns(b *Bundle, figs []Figure) []Column {
	var cols []Column
	seen := map[string]bool{}
	for _, f := range figs {
		if !seen[f.Key()] {
			seen[f.Key()] = true
			cols = append(cols, f.Column)
		}
	}
	order := func(w string) int {
		return slices.IndexFunc(b.Workloads, func(r Run) bool { return r.Name == w })
	}
	slices.SortStableFunc(cols, func(a, b Column) int {
		if d := order(a.Workload) - order(b.Workload); d != 0 {
			return d
		}
		return a.Clients - b.Clients
	})
	return cols
}
