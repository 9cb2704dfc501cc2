package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// cpuSides is what a cell's CPU says of its limit: lockbench's share of
// one core over the cell, the busiest sandboxed server's, which of them
// was the limit if either, and the machine's cores when the two together
// kept them busy. ok is false for cells without sandboxed servers, or
// shorter than a second (/proc counts CPU in 10 ms ticks).
type cpuSides struct {
	lockbench, server float64 // shares of one core
	serverAddr        string
	machine           float64 // share of all cores, when ≥ 90%, else 0
	cores             int
	usable            int // cores lockbench could use: min(GOMAXPROCS, cores), at least 1
}

func cellCPU(c Cell) (s cpuSides, ok bool) {
	g := c.Generator
	if g == nil || g.ServerSpanS < minCPUSpanS || len(g.ServerCPUS) == 0 {
		return s, false
	}
	s.lockbench, s.machine, s.cores = g.CPUS/g.ServerSpanS, coresBusy(c), g.Cores
	// Judged against what the measurement ran on: a warm-up's trial of
	// more threads is a few per cent of a cell's time.
	s.usable = max(1, g.Procs)
	if g.Cores > 0 {
		s.usable = max(1, min(s.usable, g.Cores))
	}
	for a, v := range g.ServerCPUS {
		if share := v / g.ServerSpanS; share > s.server || (share == s.server && a < s.serverAddr) {
			s.server, s.serverAddr = share, a
		}
	}
	return s, true
}

// limit names the side that held the cell back, or "" when neither ran
// near a core's worth and the cores were not all busy.
func (s cpuSides) limit() string {
	switch {
	case s.machine > 0:
		return fmt.Sprintf("the machine's %d cores, %.0f%% busy", s.cores, 100*s.machine)
	case s.lockbench >= coreShare*float64(s.usable) && s.lockbench >= s.server:
		return "lockbench"
	case s.server >= coreShare:
		return "the server"
	}
	return ""
}

// coreShare is the share of a core at which a side counts as the limit.
const coreShare = 0.8

// limitVerdict answers "which side was the limit" from the CPU that
// lockbench and the sandboxed servers used over each cell: cells where a
// side ran near its cores' worth (lockbench: of the cores GOMAXPROCS lets
// it use; a server: of one) or the cores were all busy are named, those
// where lockbench was the limit first, then the busiest; else the answer
// is that neither was. An answer that names lockbench is marked bad: those
// figures measure the generator.
func limitVerdict(cells []Cell) (VerdictLine, bool) {
	type named struct {
		text      string
		lockbench bool
		busiest   float64
	}
	var (
		all           []named
		seen          int
		maxLB, maxSrv float64
	)
	for _, c := range cells {
		s, ok := cellCPU(c)
		if !ok {
			continue
		}
		seen++
		maxLB, maxSrv = max(maxLB, s.lockbench), max(maxSrv, s.server)
		l := s.limit()
		if l == "" {
			continue
		}
		all = append(all, named{fmt.Sprintf("%s %s ×%d: %s (lockbench %.0f%% of a core, server %.0f%%)",
			c.Impl, c.Scenario, c.Clients, l, 100*s.lockbench, 100*s.server), l == "lockbench", max(s.lockbench, s.server)})
	}
	if seen == 0 {
		return VerdictLine{}, false
	}
	v := VerdictLine{Question: "Limit", Anchor: anchorResults}
	if len(all) == 0 {
		v.Answer = fmt.Sprintf("✓ neither side: lockbench used at most %.0f%% of a core, the servers at most %.0f%%, in %s",
			100*maxLB, 100*maxSrv, plural(int64(seen), "cell"))
		v.Answer += procsClause(cells)
		return v, true
	}
	slices.SortStableFunc(all, func(a, b named) int {
		if a.lockbench != b.lockbench {
			if a.lockbench {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.busiest, a.busiest)
	})
	v.Bad = all[0].lockbench
	var parts []string
	for _, n := range all[:min(3, len(all))] {
		parts = append(parts, n.text)
	}
	v.Answer = strings.Join(parts, "; ")
	if len(all) > 3 {
		v.Answer += fmt.Sprintf("; and %d more", len(all)-3)
	}
	v.Answer += procsClause(cells)
	return v, true
}

// procsClause says how many threads lockbench kept for itself where
// its servers shared the machine and its cells tried (engine.ProcsTrial),
// once for the run: "GOMAXPROCS 2 in 5 cells (3 undecided), 1 in 3".
func procsClause(cells []Cell) string {
	kept, undecided := map[int]int{}, map[int]int{}
	var procs []int
	for _, c := range cells {
		if g := c.Generator; g != nil && g.ProcsWhy != "" {
			if kept[g.Procs] == 0 {
				procs = append(procs, g.Procs)
			}
			kept[g.Procs]++
			if g.ProcsUndecided {
				undecided[g.Procs]++
			}
		}
	}
	if len(procs) == 0 {
		return ""
	}
	slices.SortStableFunc(procs, func(a, b int) int { return cmp.Compare(kept[b], kept[a]) })
	parts := make([]string, len(procs))
	for i, p := range procs {
		parts[i] = fmt.Sprintf("%d in %s", p, plural(int64(kept[p]), "cell"))
		if u := undecided[p]; u > 0 {
			parts[i] += fmt.Sprintf(" (%d of them as the trial could not tell)", u)
		}
	}
	return " — its servers sharing the machine, lockbench tried its own threads as its cells warmed up and kept GOMAXPROCS " + strings.Join(parts, ", ")
}
