package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
)

// Table prints cells as an aligned text table that fits TableWidth
// columns: the figures a reader scans first (throughput, p50, p99, p99.9,
// errors, notifications), then those that fit. Every figure of a cell is in
// summary.csv and summary.json; the table is the glance. Herd columns
// (release wake-ups against theory) appear when any cell has them.
type Table struct {
	w    io.Writer
	cols []tableCol
	hdr  bool
}

// TableWidth is the widest line the table prints, notes aside.
const TableWidth = 100

// TableOptions say what a table will hold, so that its columns are chosen
// once, before the first row: Impls and Scenarios size the name columns,
// Herd adds the wake-up column.
type TableOptions struct {
	Impls, Scenarios []string
	Herd             bool
}

// tableCol is one column: its header, width, and the text of a cell in it.
type tableCol struct {
	name  string
	width int
	left  bool
	get   func(Cell) string
}

// NewTable returns a table writing to w. With herd set it carries the
// wake-up column.
func NewTable(w io.Writer, herd bool) *Table { return NewTableFor(w, TableOptions{Herd: herd}) }

// NewTableFor returns a table writing to w with columns chosen for opts.
func NewTableFor(w io.Writer, opts TableOptions) *Table {
	return &Table{w: w, cols: tableColumns(opts)}
}

// tableColumns lays out the columns by priority: the first ones always,
// later ones while the line stays within TableWidth.
func tableColumns(opts TableOptions) []tableCol {
	implW, scenW := 12, 8 // the longest names lockbench ships, when not told
	if len(opts.Impls) > 0 {
		implW = 4
		for _, n := range opts.Impls {
			implW = max(implW, utf8.RuneCountInString(n)+1) // room for the ! of an unsafe cell
		}
	}
	for _, n := range opts.Scenarios {
		scenW = max(scenW, utf8.RuneCountInString(n))
	}
	lat := func(name string, q func(Latency) float64) tableCol {
		return tableCol{name, 7, false, func(c Cell) string { return result.Dur(q(c.AcquireLatencyUs)) }}
	}
	all := []tableCol{
		{"impl", implW, true, func(c Cell) string {
			if judge.CellSafety(c).Bad() {
				return c.Impl + "!"
			}
			return c.Impl
		}},
		{"scenario", scenW, true, func(c Cell) string { return c.Scenario }},
		{"clients", 7, false, func(c Cell) string { return fmt.Sprint(c.Clients) }},
		{"acq/s", 8, false, func(c Cell) string { return fmt.Sprintf("%.0f", c.AcquiresPerS) }},
		lat("p50", func(l Latency) float64 { return l.P50 }),
		lat("p99", func(l Latency) float64 { return l.P99 }),
		lat("p99.9", func(l Latency) float64 { return l.P999 }),
		{"errors", 6, false, func(c Cell) string { return fmt.Sprint(c.Errors) }},
		{"notif/acq", 9, false, func(c Cell) string { return fmt.Sprintf("%.2f", c.NotificationsPerAcquire) }},
	}
	if opts.Herd {
		all = append(all, tableCol{"wake/theory", 11, false, wakeupsText})
	}
	all = append(all,
		tableCol{"retry/acq", 9, false, func(c Cell) string { return fmt.Sprintf("%.2f", c.RetriesPerAcquire) }},
		tableCol{"fair", 4, false, func(c Cell) string {
			if c.Fairness == nil || c.Clients < 2 {
				return "-"
			}
			return fmt.Sprintf("%.2f", c.Fairness.Jain)
		}},
		lat("max", func(l Latency) float64 { return l.Max }),
		// Last, so that it shows where the line has room: report.html and
		// summary.csv always have it.
		tableCol{"gap p50", 7, false, func(c Cell) string {
			if c.HandoffGapUs == nil || c.HandoffGapUs.P50 <= 0 {
				return "-"
			}
			return result.Dur(c.HandoffGapUs.P50)
		}},
	)
	var cols []tableCol
	width := -1
	for _, c := range all {
		if width+1+c.width > TableWidth {
			continue
		}
		width += 1 + c.width
		cols = append(cols, c)
	}
	return cols
}

// wakeupsText is a cell's (release) wake-ups over what theory predicts.
func wakeupsText(c Cell) string {
	n, _ := releaseWakeups(c)
	if c.TheoryWakeups != nil {
		return fmt.Sprintf("%d/%d", n, *c.TheoryWakeups)
	}
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// Row prints one cell, with the header before the first.
func (t *Table) Row(c Cell) error {
	var b strings.Builder
	if !t.hdr {
		head := make([]string, len(t.cols))
		for i, col := range t.cols {
			head[i] = col.name
		}
		b.WriteString(t.line(head))
		t.hdr = true
	}
	f := make([]string, len(t.cols))
	for i, col := range t.cols {
		f[i] = col.get(c)
	}
	b.WriteString(t.line(f))
	for _, n := range notes(c) {
		b.WriteString(wrap(n, "    ", "      ", TableWidth))
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

// WriteTable prints cells as one table, the same as the rows printed live.
func WriteTable(w io.Writer, cells []Cell) error {
	var opts TableOptions
	for _, c := range cells {
		opts.Herd = opts.Herd || c.Wakeups > 0 || c.TheoryWakeups != nil
		if !slices.Contains(opts.Impls, c.Impl) {
			opts.Impls = append(opts.Impls, c.Impl)
		}
		if !slices.Contains(opts.Scenarios, c.Scenario) {
			opts.Scenarios = append(opts.Scenarios, c.Scenario)
		}
	}
	t := NewTableFor(w, opts)
	for _, c := range cells {
		if err := t.Row(c); err != nil {
			return err
		}
	}
	return nil
}

// wrap breaks text at spaces into lines of at most width characters, the
// first indented by first, the others by rest; a word longer than a line
// stays whole.
func wrap(text, first, rest string, width int) string {
	var b strings.Builder
	line, n := first, utf8.RuneCountInString(first)
	empty := true
	for _, w := range strings.Fields(text) {
		wn := utf8.RuneCountInString(w)
		if !empty && n+1+wn > width {
			b.WriteString(line + "\n")
			line, n, empty = rest, utf8.RuneCountInString(rest), true
		}
		if !empty {
			line += " "
			n++
		}
		line += w
		n += wn
		empty = false
	}
	b.WriteString(line + "\n")
	return b.String()
}

// WriteCSV prints cells as summary.csv has them: every figure of every
// cell, a column each.
func WriteCSV(w io.Writer, cells []Cell) error {
	b, err := summaryCSV(cells)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// line lays fields out in the columns: names left-aligned, numbers
// right-aligned, widths counted in characters (µ is one).
func (t *Table) line(fields []string) string {
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(' ')
		}
		fill := strings.Repeat(" ", max(0, t.cols[i].width-utf8.RuneCountInString(f)))
		if t.cols[i].left {
			b.WriteString(f + fill)
		} else {
			b.WriteString(fill + f)
		}
	}
	return strings.TrimRight(b.String(), " ") + "\n"
}

// notes are the indented lines under a row: the open loop's accounting,
// safety violations, and warnings about lockbench itself.
func notes(c Cell) []string {
	var out []string
	for _, n := range []string{roundsNote(c), unstableNote(c)} {
		if n != "" {
			out = append(out, n)
		}
	}
	if o := c.Open; o != nil {
		out = append(out, fmt.Sprintf("open loop: %d offered at %.0f/s (%s), %d dropped, %d unfinished; latency above counts from the intended arrival; service p50 %s p99 %s; schedule lag p50 %s p99 %s",
			o.Offered, o.Rate, o.Arrival, o.Dropped, o.Unfinished, result.Dur(o.ServiceLatencyUs.P50), result.Dur(o.ServiceLatencyUs.P99),
			result.Dur(o.ScheduleLagUs.P50), result.Dur(o.ScheduleLagUs.P99)))
	}
	if c.Errors > 0 && len(c.ErrorsByClass) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(c.ErrorsByClass)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, c.ErrorsByClass[k]))
		}
		out = append(out, "errors: "+strings.Join(parts, ", "))
	}
	if s := renewalsNote(c); s != "" {
		out = append(out, s)
	}
	if sc := c.ServerCounts; sc != nil && sc.Watches != nil {
		v, cn := *sc.Watches, sc.ClientNotifications
		switch {
		case cn == v:
		case c.Theory.OnServer():
			out = append(out, fmt.Sprintf("servers fired %d watches to their own waiters (the queue is the server's), clients received %d", v, cn))
		case c.Shard != nil: // the servers counted every shard's watches, this shard its own clients'
			out = append(out, fmt.Sprintf("servers fired %d watches over all %d shards, %d to this shard's clients (merge compares totals)", v, c.Shard.Count, cn))
		default:
			out = append(out, fmt.Sprintf("! servers fired %d watches, clients received %d notifications", v, cn))
		}
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
	switch u := judge.CellSafety(c); {
	case u.Bad() && u.Violations() == u.Other && u.LostUpdates == 0 && !u.NotLinearizable:
		out = append(out, fmt.Sprintf("UNSAFE: %d mutual-exclusion violations (see safety_violations in summary.json)", u.Other))
	case u.Bad():
		out = append(out, "UNSAFE: "+UnsafetyWords(u)+" (see safety in summary.json)")
	}
	if c.FailedCreates > 0 {
		out = append(out, fmt.Sprintf("failed creates: %d (NodeExists: waiters that lost the race for the lock node), %.2f per acquisition",
			c.FailedCreates, float64(c.FailedCreates)/float64(max(c.Acquires, 1))))
	}
	if c.Settle == "timeout" {
		out = append(out, "burst: a hand-off gave up waiting for the queue to settle; wake-up counts may fall short of theory")
	}
	if s := FaultSentence(c); s != "" {
		out = append(out, s)
	}
	if g := c.Generator; g != nil && g.Warning != "" {
		out = append(out, "! generator: "+g.Warning+" — the figures may measure lockbench, not the lock")
	}
	if m := judge.MachineBusy(c); m.Kind != "" {
		out = append(out, "! machine: "+busyWords(m)+" — the figures are partly theirs")
	}
	return append(out, cpuNotes(c)...)
}

// cpuNotes is what lockbench's and the sandboxed servers' CPU say of the
// cell's limit: a server that ran near a core's worth while the machine
// had cores to spare, and, for a burst or when the cores were all busy,
// both sides' shares (see burstCPU).
func cpuNotes(c Cell) []string {
	var out []string
	if s := saturatedServers(c); s != "" && judge.CellLimit(c) != judge.SideMachine {
		out = append(out, "! servers: "+s+" — the service may have been the limit")
	}
	if s := burstCPU(c); s != "" {
		out = append(out, s)
	}
	return out
}

// burstCPU sets lockbench's CPU beside each sandboxed server's over the
// cell, in shares of one core (the cell's derived CPU shares), for a
// burst — a herd costs both, and which of them held the burst back is the
// question its wall time raises — and for any cell whose sides together
// kept the machine's cores busy. It names the busier side, or says the
// cores were the limit. A cell shorter than result.MinCPUSpanS has no
// shares: CPU times from /proc count in 10 ms ticks.
func burstCPU(c Cell) string {
	s := c.CPU
	if s == nil {
		return ""
	}
	machine := judge.CellLimit(c) == judge.SideMachine
	if c.Kind != result.KindBurst && !machine {
		return ""
	}
	parts := []string{fmt.Sprintf("lockbench %.0f%%", 100*s.Lockbench)}
	busier, top := "lockbench", s.Lockbench
	for _, sv := range s.Servers {
		parts = append(parts, fmt.Sprintf("server %s %.0f%%", sv.Addr, 100*sv.Share))
		if sv.Share > top {
			busier, top = "server "+sv.Addr, sv.Share
		}
	}
	text := fmt.Sprintf("cpu over %s, in shares of one core: %s; ", result.Dur(s.SpanS*1e6), strings.Join(parts, ", "))
	if machine {
		return fmt.Sprintf("! %stogether %.0f%% of the machine's %d cores: the cores were the limit, not one side alone (the busier: %s)",
			text, 100*s.Machine, s.Cores, busier)
	}
	return text + "the busier side: " + busier
}

// saturatedServers names the sandboxed servers that used at least
// judge.CoreShare of a core over the cell, with lockbench's share beside.
func saturatedServers(c Cell) string {
	s := c.CPU
	if s == nil {
		return ""
	}
	var parts []string
	for _, sv := range s.Servers {
		if sv.Share >= judge.CoreShare {
			parts = append(parts, fmt.Sprintf("%s used %.0f%% of a core", sv.Addr, 100*sv.Share))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s, lockbench %.0f%%", strings.Join(parts, ", "), 100*s.Lockbench)
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

// renewalsNote says how a leader's renewals went, for a lock that times
// them (k8s-lease): their latency, client-side throttling included, how
// many were late (over the retry period) or missed, and the leaderships
// given up before their release; "" for others.
func renewalsNote(c Cell) string {
	v, ok := c.Vectors["renewals"]
	if !ok || len(v) < 3 {
		return ""
	}
	s := fmt.Sprintf("renewals: %d late, %d missed; %s lost before release", v[0], v[1], countOf(v[2], "leadership"))
	if d, ok := c.Distributions["renew_ms"]; ok && d.Count > 0 {
		s += fmt.Sprintf(" (%d renewals: p50 %s, p99 %s, max %s)", d.Count, faultMs(d.P50), faultMs(d.P99), faultMs(d.Max))
	}
	return s
}
