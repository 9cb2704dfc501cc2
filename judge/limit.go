package judge

import (
	"cmp"
	"slices"

	"github.com/lockbench/lockbench/result"
)

// Side is what held a cell back.
type Side string

// Sides a cell's limit can be.
const (
	SideNone      Side = ""
	SideLockbench Side = "lockbench"
	SideServer    Side = "server"
	SideMachine   Side = "machine"
)

// CoreShare is the share of a core at which a side counts as the limit;
// MachineShare, the share of all cores at which the machine does.
const (
	CoreShare    = 0.8
	MachineShare = 0.9
)

// CellLimit is the side that held one cell back, by its CPU shares.
func CellLimit(c result.Cell) Side {
	s := c.CPU
	if s == nil || len(s.Servers) == 0 {
		return SideNone
	}
	server := s.Busiest.Share
	switch {
	case s.Machine >= MachineShare:
		return SideMachine
	case s.Lockbench >= CoreShare*float64(s.Usable) && s.Lockbench >= server:
		return SideLockbench
	case server >= CoreShare:
		return SideServer
	}
	return SideNone
}

// Limit is which side held the run back: cells where lockbench, a server
// or the machine's cores were the limit (lockbench's first, then the
// busiest), out of Seen cells whose CPU is known, and how many threads
// lockbench kept for itself where it chose.
type Limit struct {
	Rows              []LimitRow
	Seen              int
	MaxLockbench      float64
	MaxServer         float64
	Procs             []ProcsKept
	LockbenchWasLimit bool
}

// LimitRow is one cell a side held back.
type LimitRow struct {
	CellRef
	Side              Side
	Lockbench, Server float64 // shares of one core
	Machine           float64 // share of all cores
	Cores             int
}

// ProcsKept is how many cells kept a GOMAXPROCS after their trial, and
// how many of them kept it because the trial could not tell.
type ProcsKept struct {
	Procs, Cells, Undecided int
}

func limit(cells []result.Cell) *Limit {
	var l Limit
	for _, c := range cells {
		s := c.CPU
		if s == nil || len(s.Servers) == 0 {
			continue
		}
		l.Seen++
		l.MaxLockbench, l.MaxServer = max(l.MaxLockbench, s.Lockbench), max(l.MaxServer, s.Busiest.Share)
		side := CellLimit(c)
		if side == SideNone {
			continue
		}
		l.Rows = append(l.Rows, LimitRow{CellRef: Ref(c), Side: side, Lockbench: s.Lockbench, Server: s.Busiest.Share,
			Machine: s.Machine, Cores: s.Cores})
	}
	if l.Seen == 0 {
		return nil
	}
	slices.SortStableFunc(l.Rows, func(a, b LimitRow) int {
		if (a.Side == SideLockbench) != (b.Side == SideLockbench) {
			if a.Side == SideLockbench {
				return -1
			}
			return 1
		}
		return cmp.Compare(max(b.Lockbench, b.Server), max(a.Lockbench, a.Server))
	})
	l.LockbenchWasLimit = len(l.Rows) > 0 && l.Rows[0].Side == SideLockbench
	l.Procs = procsKept(cells)
	return &l
}

func procsKept(cells []result.Cell) []ProcsKept {
	var out []ProcsKept
	at := map[int]int{}
	for _, c := range cells {
		g := c.Generator
		// Only what a trial kept: an open loop's GOMAXPROCS is set by
		// rule (its procs_why says which), not tried.
		if g == nil || g.ProcsWhy == "" || len(g.ProcsTrial) == 0 && !g.ProcsUndecided {
			continue
		}
		i, ok := at[g.Procs]
		if !ok {
			i = len(out)
			at[g.Procs] = i
			out = append(out, ProcsKept{Procs: g.Procs})
		}
		out[i].Cells++
		if g.ProcsUndecided {
			out[i].Undecided++
		}
	}
	slices.SortStableFunc(out, func(a, b ProcsKept) int { return cmp.Compare(b.Cells, a.Cells) })
	return out
}
