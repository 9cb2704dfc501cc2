package report

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/judge"
)

// limitLine answers "which side was the limit": cells where a side ran
// near its cores' worth or the cores were all busy are named, those where
// lockbench was the limit first, then the busiest; else the answer is
// that neither was. An answer that names lockbench is marked bad: those
// figures measure the generator.
func limitLine(l judge.Limit) VerdictLine {
	v := VerdictLine{Question: "Limit", Anchor: anchorResults, Bad: l.LockbenchWasLimit}
	if len(l.Rows) == 0 {
		v.Answer = fmt.Sprintf("✓ neither side: lockbench used at most %.0f%% of a core, the servers at most %.0f%%, in %s",
			100*l.MaxLockbench, 100*l.MaxServer, plural(int64(l.Seen), "cell")) + procsClause(l.Procs)
		return v
	}
	var parts []string
	for _, r := range l.Rows[:min(3, len(l.Rows))] {
		parts = append(parts, fmt.Sprintf("%s %s ×%d: %s (lockbench %.0f%% of a core, server %.0f%%)",
			r.Impl, r.Scenario, r.Clients, sideText(r), 100*r.Lockbench, 100*r.Server))
	}
	v.Answer = strings.Join(parts, "; ")
	if len(l.Rows) > 3 {
		v.Answer += fmt.Sprintf("; and %d more", len(l.Rows)-3)
	}
	v.Answer += procsClause(l.Procs)
	return v
}

func sideText(r judge.LimitRow) string {
	switch r.Side {
	case judge.SideMachine:
		return fmt.Sprintf("the machine's %d cores, %.0f%% busy", r.Cores, 100*r.Machine)
	case judge.SideServer:
		return "the server"
	}
	return string(r.Side)
}

// procsClause says how many threads lockbench kept for itself where its
// servers shared the machine and its cells tried, once for the run: "2 in
// 5 cells (3 of them as the trial could not tell), 1 in 3".
func procsClause(kept []judge.ProcsKept) string {
	if len(kept) == 0 {
		return ""
	}
	parts := make([]string, len(kept))
	for i, p := range kept {
		parts[i] = fmt.Sprintf("%d in %s", p.Procs, plural(int64(p.Cells), "cell"))
		if p.Undecided > 0 {
			parts[i] += fmt.Sprintf(" (%d of them as the trial could not tell)", p.Undecided)
		}
	}
	return " — its servers sharing the machine, lockbench tried its own threads as its cells warmed up and kept GOMAXPROCS " + strings.Join(parts, ", ")
}
