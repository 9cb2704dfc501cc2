package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/result"
)

// VerdictTable is a verdict given as a small table, beside its sentence.
type VerdictTable struct {
	Header []string
	Rows   [][]string
}

// burstCosts is one lock's bursts: its cost per hand-off at each client
// count, and the cell of the largest.
type burstCosts struct {
	impl    string
	cells   []Cell // the bursts with a cost per hand-off, by client count
	largest Cell
	cost    result.HandoffCost
	ns      []float64
	wakes   []float64
	cpu     []float64
	theory  bool
}

// collectBurstCosts gathers, per implementation with a burst on one lock,
// its cost per hand-off at each client count (waiters who left a queue
// aside: they follow no burst curve).
func collectBurstCosts(cells []Cell) []burstCosts {
	var out []burstCosts
	for _, g := range result.GroupCells(result.WithoutFaults(cells)) {
		if !isBurst(g.Cells[0]) {
			continue
		}
		b := burstCosts{impl: g.Impl}
		for _, c := range g.Cells {
			h, ok := result.HandoffCosts(c)
			if !ok || leavingQueue(c) {
				continue
			}
			b.largest, b.cost = c, h
			b.cells = append(b.cells, c)
			b.ns = append(b.ns, float64(c.Clients))
			b.wakes = append(b.wakes, h.Wakeups)
			cpu := math.NaN()
			if h.ServerCPUUs != nil {
				cpu = *h.ServerCPUUs
			}
			b.cpu = append(b.cpu, cpu)
			b.theory = b.theory || h.Theory != nil
		}
		if len(b.ns) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// herdCostVerdict is the herd's verdict from bursts: a row per lock at
// its largest burst (its n in the row and the sentence, since locks may
// differ in it) — wake-ups per hand-off against theory, the servers'
// messages and CPU per hand-off, lockbench's CPU, the hand-off gap, and
// how many times the cheapest lock's server CPU it costs — with the
// growth of wake-ups and server CPU per hand-off over the client counts
// (the fitted exponent of n), and one sentence naming the dearest and the
// cheapest.
func herdCostVerdict(cells []Cell) (VerdictLine, bool) {
	bs := collectBurstCosts(cells)
	if len(bs) == 0 {
		return VerdictLine{}, false
	}
	cheapest, dearest := -1, -1
	for i, b := range bs {
		if b.cost.ServerCPUUs == nil {
			continue
		}
		if cheapest < 0 || *b.cost.ServerCPUUs < *bs[cheapest].cost.ServerCPUUs {
			cheapest = i
		}
		if dearest < 0 || *b.cost.ServerCPUUs > *bs[dearest].cost.ServerCPUUs {
			dearest = i
		}
	}
	t := &VerdictTable{Header: []string{"lock", "n", "wake-ups / hand-off", "theory", "server msgs / hand-off",
		"server CPU / hand-off", "lockbench CPU / hand-off", "gap p50", "× cheapest", "growth in n (wake-ups; server CPU)", "server's count"}}
	for _, b := range bs {
		c, h := b.largest, b.cost
		row := []string{b.impl, commas(int64(c.Clients)), fmt.Sprintf("%.2f", h.Wakeups), theoryMark(c, h)}
		row = append(row, optional(h.Messages, func(v float64) string { return fmt.Sprintf("%.1f %s", v, h.MessagesUnit) }))
		row = append(row, optional(h.ServerCPUUs, micros)+repeatSpread(c), optional(h.GeneratorCPUUs, micros))
		gap := "—"
		if h.GapUs != nil {
			gap = micros(h.GapUs.P50)
		}
		times := "—"
		if h.ServerCPUUs != nil && cheapest >= 0 && *bs[cheapest].cost.ServerCPUUs > 0 {
			times = fmt.Sprintf("%.1f×", *h.ServerCPUUs / *bs[cheapest].cost.ServerCPUUs)
		}
		server := strings.TrimPrefix(serverClause(c), ", ")
		if server == "" {
			server = "—"
		}
		row = append(row, gap, times, growthText(b.ns, b.wakes)+"; "+growthText(b.ns, b.cpu), server)
		t.Rows = append(t.Rows, row)
	}
	answer := "cost per hand-off at each lock's largest burst below"
	if cheapest >= 0 && dearest != cheapest && *bs[cheapest].cost.ServerCPUUs > 0 {
		d, ch := bs[dearest], bs[cheapest]
		answer = fmt.Sprintf("dearest %s, %s of server CPU per hand-off at %s (%.1f× %s, the cheapest at %s at %s)",
			d.impl, micros(*d.cost.ServerCPUUs), plural(int64(d.largest.Clients), "client"),
			*d.cost.ServerCPUUs / *ch.cost.ServerCPUUs, ch.impl, micros(*ch.cost.ServerCPUUs), plural(int64(ch.largest.Clients), "client"))
	}
	perHandoff := map[string]float64{}
	largest := 0
	for _, b := range bs {
		if b.cost.Theory != nil && *b.cost.Theory > 0 {
			perHandoff[b.impl] = b.cost.Wakeups
			largest = max(largest, b.largest.Clients)
		}
	}
	return VerdictLine{Question: "Herd cost", Answer: answer + ratioClause(perHandoff, largest) + ".",
		Anchor: figureAnchor("burst-costs"), Table: t}, true
}

// repeatSpread is a repeated burst's spread of server CPU per hand-off
// over its repeats: " (1.2–1.4 ms over 5)".
func repeatSpread(c Cell) string {
	r := c.RepeatServerCPUUs
	if len(r) < 2 {
		return ""
	}
	return fmt.Sprintf(" (%s–%s over %d)", micros(slices.Min(r)), micros(slices.Max(r)), len(r))
}

// theoryMark is the wake-ups theory predicts per hand-off, ✓ when the
// burst's count equals it exactly (README: a burst's counts are exact).
func theoryMark(c Cell, h result.HandoffCost) string {
	t := c.TheoryOf()
	if t == nil || h.Theory == nil {
		return "—"
	}
	n, _ := releaseWakeups(c)
	want := t.BurstWakeups(c.Clients) * int64(max(c.Repeats, 1))
	if c.TheoryWakeups != nil {
		want = *c.TheoryWakeups
	}
	if want == 0 {
		// A server-side queue: any notification or wake-up at all is off.
		n += c.Notifications + c.WastedWakeups
	}
	return fmt.Sprintf("%.2f (%s) %s", *h.Theory, t.Formula, exactAgreement(n, want))
}

// growthText is a fitted exponent of n with its 95 % interval: n^1.00
// [0.98, 1.02]; "—" with fewer than two client counts.
func growthText(ns, ys []float64) string {
	g, ok := result.FitGrowth(ns, ys)
	if !ok {
		return "—"
	}
	if math.IsNaN(g.Low) {
		return fmt.Sprintf("n^%.2f", g.Exponent)
	}
	return fmt.Sprintf("n^%.2f [%.2f, %.2f]", g.Exponent, g.Low, g.High)
}

func optional(v *float64, f func(float64) string) string {
	if v == nil {
		return "unknown"
	}
	return f(*v)
}

// micros prints a time in µs with a unit that suits it.
func micros(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%.2f s", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%.2f ms", us/1e3)
	}
	return fmt.Sprintf("%.0f µs", us)
}
