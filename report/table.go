package report

import (
	"maps"
	"slices"

	"github.com/lockbench/lockbench/result"

	"fmt"
	"io"
	"strings"
)

// Table prints cells as an aligned text table. Herd columns (wake-ups,
// theory, server-side watch triggers) appear when any cell has them.
type Table struct {
	w   io.Writer
	zk  bool
	hdr bool
}

// NewTable returns a table writing to w. With herd set it carries the
// ZooKeeper herd columns.
func NewTable(w io.Writer, herd bool) *Table { return &Table{w: w, zk: herd} }

var baseCols = []string{"impl", "scenario", "clients", "acq/s", "p50", "p90", "p99", "p99.9", "max", "errors", "lost", "retries/acq", "notif/acq", "fair", "handoff"}
var herdCols = []string{"wakeups", "theory", "release_wk", "wasted", "srv_watches"}

// Row prints one cell, with the header before the first.
func (t *Table) Row(c Cell) error {
	var b strings.Builder
	if !t.hdr {
		b.WriteString(line(columns(t.zk)))
		t.hdr = true
	}
	b.WriteString(line(rowFields(c, t.zk)))
	for _, n := range notes(c) {
		b.WriteString("    " + n + "\n")
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

// WriteTable prints cells as one table, the same as the rows printed live.
func WriteTable(w io.Writer, cells []Cell) error {
	herd := false
	for _, c := range cells {
		herd = herd || c.Wakeups > 0 || c.TheoryWakeups != nil || c.Server != nil
	}
	t := NewTable(w, herd)
	for _, c := range cells {
		if err := t.Row(c); err != nil {
			return err
		}
	}
	return nil
}

func columns(herd bool) []string {
	if herd {
		return append(append([]string{}, baseCols...), herdCols...)
	}
	return baseCols
}

// line lays fields out in fixed-width columns: the first two (impl,
// scenario) left-aligned, numbers right-aligned.
func line(fields []string) string {
	var b strings.Builder
	for i, f := range fields {
		switch i {
		case 0:
			fmt.Fprintf(&b, "%-17s", f)
		case 1:
			fmt.Fprintf(&b, "%-8s", f)
		default:
			fmt.Fprintf(&b, " %*s", max(colWidth-1, len(f)), f)
		}
	}
	return strings.TrimRight(b.String(), " ") + "\n"
}

const colWidth = 12

func rowFields(c Cell, herd bool) []string {
	impl := c.Impl
	if c.SafetyViolations > 0 {
		impl += " !UNSAFE"
	}
	f := []string{
		impl, c.Scenario, fmt.Sprint(c.Clients), fmt.Sprintf("%.0f", c.AcquiresPerS),
		result.Dur(c.AcquireLatencyUs.P50), result.Dur(c.AcquireLatencyUs.P90), result.Dur(c.AcquireLatencyUs.P99),
		result.Dur(c.AcquireLatencyUs.P999), result.Dur(c.AcquireLatencyUs.Max),
		fmt.Sprint(c.Errors), fmt.Sprint(c.Lost),
		fmt.Sprintf("%.2f", c.RetriesPerAcquire), fmt.Sprintf("%.2f", c.NotificationsPerAcquire),
		"-", "-",
	}
	if c.Fairness != nil && c.Clients > 1 {
		f[13] = fmt.Sprintf("%.2f", c.Fairness.Jain)
	}
	if c.HandoffGapUs != nil {
		f[14] = result.Dur(c.HandoffGapUs.P50)
	}
	if herd {
		theory := "-"
		if c.TheoryWakeups != nil {
			theory = fmt.Sprint(*c.TheoryWakeups)
		}
		server := "-"
		if v, ok := c.Server["watch_triggered"]; ok {
			// The whole cell on both sides: ✓ when the clients received
			// exactly the notifications the servers sent.
			server = fmt.Sprint(v)
			if cn, ok := c.Server["client_notifications"]; ok {
				if cn == v {
					server += "✓"
				} else {
					server += fmt.Sprintf("≠%d", cn)
				}
			}
		} else if c.ServerNote != "" {
			server = "n/a"
		}
		f = append(f, fmt.Sprint(c.Wakeups), theory, fmt.Sprint(c.ReleaseWakeups), fmt.Sprint(c.WastedWakeups), server)
	}
	return f
}

// notes are the indented lines under a row: the open loop's accounting,
// safety violations, and warnings about lockbench itself.
func notes(c Cell) []string {
	var out []string
	if o := c.Open; o != nil {
		out = append(out, fmt.Sprintf("open loop: %d offered at %.0f/s (%s), %d dropped, %d unfinished; latency above counts from the intended arrival; service p50 %s p99 %s; schedule lag p99 %s",
			o.Offered, o.Rate, o.Arrival, o.Dropped, o.Unfinished, result.Dur(o.ServiceLatencyUs.P50), result.Dur(o.ServiceLatencyUs.P99), result.Dur(o.ScheduleLagUs.P99)))
	}
	if c.Truncated != "" {
		out = append(out, "TRUNCATED: "+c.Truncated)
	}
	if a := c.Abandon; a != nil {
		out = append(out, abandonNote(c, a))
	}
	if r := c.Renew; r != nil {
		out = append(out, fmt.Sprintf("renew: %d renewals, %.1f/s per holder, latency p50 %s p99 %s; %d found the lock lost, %d failed",
			r.Count, r.PerHolderPerS, result.Dur(r.LatencyUs.P50), result.Dur(r.LatencyUs.P99), r.Lost, r.Errors))
	}
	if c.SafetyViolations > 0 {
		out = append(out, fmt.Sprintf("UNSAFE: %d mutual-exclusion violations (see safety_violations in summary.json)", c.SafetyViolations))
	}
	if c.FailedCreates > 0 {
		out = append(out, fmt.Sprintf("failed creates: %d (NodeExists: waiters that lost the race for the lock node), %.2f per acquisition",
			c.FailedCreates, float64(c.FailedCreates)/float64(max(c.Acquires, 1))))
	}
	if c.Settle == "timeout" {
		out = append(out, "burst: a hand-off gave up waiting for the queue to settle; wake-up counts may fall short of theory")
	}
	if c.Verdict != "" {
		out = append(out, c.Verdict)
	}
	if g := c.Generator; g != nil && g.Warning != "" {
		out = append(out, "! generator: "+g.Warning+" — the figures may measure lockbench, not the lock")
	}
	if s := saturatedServers(c); s != "" {
		out = append(out, "! servers: "+s+" — the service may have been the limit")
	}
	return out
}

// saturatedServers names the sandboxed servers that used at least 80% of
// a core over the cell, with their share and lockbench's own beside.
func saturatedServers(c Cell) string {
	g := c.Generator
	if g == nil || g.ServerSpanS <= 0 {
		return ""
	}
	var parts []string
	for _, a := range slices.Sorted(maps.Keys(g.ServerCPUS)) {
		if share := g.ServerCPUS[a] / g.ServerSpanS; share >= 0.8 {
			parts = append(parts, fmt.Sprintf("%s used %.0f%% of a core", a, 100*share))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s, lockbench %.0f%%", strings.Join(parts, ", "), 100*g.CPUS/g.ServerSpanS)
}

// abandonNote says what giving up cost: how many, after how long, the
// requests they sent, and in the abandon scenario the queue's order and
// what the servers held afterwards.
func abandonNote(c Cell, a *result.Abandon) string {
	s := fmt.Sprintf("abandoned: %d, waited p50 %s max %s, %.1f round trips each", a.Count,
		result.Dur(a.WaitUs.P50), result.Dur(a.WaitUs.Max), a.RoundTripsPer)
	if a.TimeoutMs > 0 {
		s += fmt.Sprintf(" (--acquire-timeout %s)", result.Dur(a.TimeoutMs*1000))
	}
	if len(a.Granted) > 0 {
		s += fmt.Sprintf("; %d granted, %d out of queue order", len(a.Granted), a.OutOfOrder)
		if a.Leftover >= 0 {
			s += fmt.Sprintf("; left on the servers: %d", a.Leftover)
		}
	}
	return s
}
