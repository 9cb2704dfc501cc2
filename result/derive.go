package result

import (
	"cmp"
	"slices"
)

// MinCPUSpanS is the shortest cell whose CPU shares are derived: /proc
// counts CPU in 10 ms ticks, so shares over less than a second are noise.
const MinCPUSpanS = 1.0

// CPUShares is a cell's CPU as shares: lockbench's and each sandboxed
// server's of one core over the cell, and theirs together of the whole
// machine. Derive fills it from Generator; readers only read.
type CPUShares struct {
	// SpanS is the wall time the shares are of (Generator.ServerSpanS).
	SpanS float64 `json:"span_s"`
	// Lockbench is lockbench's CPU over SpanS: 1 is one core's worth.
	Lockbench float64 `json:"lockbench"`
	// Servers are the sandboxed servers' shares of one core, by address;
	// Busiest is the largest of them (the first address on a tie).
	Servers []ServerShare `json:"servers,omitempty"`
	Busiest *ServerShare  `json:"busiest,omitempty"`
	// Machine is lockbench and the servers together as a share of all
	// Cores; 0 when the core count or the servers' CPU is unknown.
	Machine float64 `json:"machine"`
	Cores   int     `json:"cores,omitempty"`
	// Usable is how many cores lockbench's Go code could use:
	// min(GOMAXPROCS, Cores), at least 1.
	Usable int `json:"usable"`
}

// ServerShare is one server's CPU as a share of one core.
type ServerShare struct {
	Addr  string  `json:"addr"`
	Share float64 `json:"share"`
}

// Wake counting: what WakeFigures.Counted names.
const (
	CountedReleaseWakeups = "release_wakeups"
	CountedNotifications  = "notifications"
)

// WakeFigures is what a hand-off woke in a loop cell, per acquisition:
// release wake-ups when the implementation counts them apart (or has a
// theory, so that 0 there shows a broken counter instead of falling back),
// else every notification; and theory's wake-ups for one hand-off with the
// cell's other n−1 clients waiting on one lock.
type WakeFigures struct {
	PerAcquire float64 `json:"per_acquire"`
	Counted    string  `json:"counted"`
	// TheoryPerHandoff is nil without a theory, on several locks, or
	// with fewer than two clients.
	TheoryPerHandoff *float64 `json:"theory_per_handoff,omitempty"`
	Formula          string   `json:"theory_formula,omitempty"`
}

// Derive computes the figures a reader needs from the cell's raw ones:
// CPU shares, wake-ups per acquisition and their theory, and a burst's
// cost per hand-off. It is the one place they are derived; it runs when a
// cell is recorded, merged or read back (results written before these
// fields existed read with them filled), and is idempotent.
func (c *Cell) Derive() {
	c.CPU = cpuShares(c.Generator)
	c.Wake = wakeFigures(*c)
	c.Handoff = nil
	if h, ok := HandoffCosts(*c); ok {
		c.Handoff = &h
	}
}

func cpuShares(g *Generator) *CPUShares {
	if g == nil || g.ServerSpanS < MinCPUSpanS {
		return nil
	}
	s := &CPUShares{SpanS: g.ServerSpanS, Lockbench: g.CPUSeconds / g.ServerSpanS, Cores: g.Cores, Usable: max(1, g.Procs)}
	if g.Cores > 0 {
		s.Usable = max(1, min(s.Usable, g.Cores))
	}
	total := g.CPUSeconds
	for a, v := range g.ServerCPUSeconds {
		s.Servers = append(s.Servers, ServerShare{Addr: a, Share: v / g.ServerSpanS})
		total += v
	}
	slices.SortFunc(s.Servers, func(a, b ServerShare) int { return cmp.Compare(a.Addr, b.Addr) })
	for i, sv := range s.Servers {
		if s.Busiest == nil || sv.Share > s.Busiest.Share {
			s.Busiest = &s.Servers[i]
		}
	}
	if s.Busiest != nil {
		b := *s.Busiest
		s.Busiest = &b
	}
	if g.Cores > 0 && len(g.ServerCPUSeconds) > 0 {
		s.Machine = total / (g.ServerSpanS * float64(g.Cores))
	}
	return s
}

func wakeFigures(c Cell) *WakeFigures {
	if k := c.KindOf(); k != KindClosed && k != KindOpen || c.Acquires == 0 {
		return nil
	}
	t := c.TheoryOf()
	if c.ReleaseWakeups == 0 && t == nil && c.Notifications == 0 {
		return nil
	}
	w := &WakeFigures{PerAcquire: c.NotificationsPerAcquire, Counted: CountedNotifications}
	if c.ReleaseWakeups > 0 || t != nil {
		w.PerAcquire, w.Counted = float64(c.ReleaseWakeups)/float64(c.Acquires), CountedReleaseWakeups
	}
	if t != nil && c.Clients >= 2 && c.Locks <= 1 {
		v := t.PerHandoff(float64(c.Clients))
		w.TheoryPerHandoff, w.Formula = &v, t.PerHandoffFormula
	}
	return w
}
