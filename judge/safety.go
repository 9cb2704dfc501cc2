package judge

import "github.com/lockbench/lockbench/result"

// Safety is the run's mutual exclusion: violations by cell, stale grants
// whose write a fencing token turned away (the remedy working, not a
// violation), and, for cells merged from shards, grants of two shards that
// overlapped by no more than the clocks' skew (neither proof of a
// violation nor of safety).
type Safety struct {
	Grants     int64
	Violations int64
	Unsafe     []Count
	// Fenced is stale grants fenced, in FencedBy's cells.
	Fenced   int64
	FencedBy []CellRef
	// PossibleOverlaps are per cell merged from shards.
	PossibleOverlaps []Count
	// LostUpdates are the guarded register's lost updates, by cell, on the
	// counter the lock's users would write (result.Safety.UsersLost): what
	// the overlaps cost, and the one figure that shows a stale write
	// the overlap checker could not see.
	LostUpdates []Count
}

// Bad says the run broke mutual exclusion: a violation, or an update
// lost on the counter the lock guarded.
func (s Safety) Bad() bool { return s.Violations > 0 || len(s.LostUpdates) > 0 }

// Lost is how many updates the cells lost in all.
func (s Safety) Lost() int64 {
	var n int64
	for _, c := range s.LostUpdates {
		n += c.N
	}
	return n
}

func judgeSafety(cells []result.Cell) Safety {
	var s Safety
	for _, c := range cells {
		s.Grants += c.Acquires
		if c.SafetyViolations > 0 {
			s.Violations += c.SafetyViolations
			s.Unsafe = append(s.Unsafe, Count{Ref(c), c.SafetyViolations})
		}
		if n := FencedStale(c); n > 0 {
			s.Fenced += n
			s.FencedBy = append(s.FencedBy, Ref(c))
		}
		if n := c.Safety.UsersLost(); n > 0 {
			s.LostUpdates = append(s.LostUpdates, Count{Ref(c), n})
		}
		if m := c.Merge; m != nil && m.PossibleOverlaps > 0 {
			s.PossibleOverlaps = append(s.PossibleOverlaps, Count{Ref(c), m.PossibleOverlaps})
		}
	}
	return s
}

// FencedStale is how many stale grants a cell saw whose write the lock's
// fencing token turned away.
func FencedStale(c result.Cell) int64 {
	if c.Faults == nil || c.SafetyViolations > 0 || StaleWrites(c.Faults) == 0 {
		return 0
	}
	return c.Faults.StaleWritesRejected
}

// StaleWrites is how many of a pause's late writes came after another
// client's grant; 0 for other scenarios.
func StaleWrites(f *result.Faults) int64 {
	if f == nil || f.Pause == nil {
		return 0
	}
	return f.Pause.StaleWrites
}

// Livelock is a cell ended because clients kept trying and nobody was
// granted the lock.
type Livelock struct {
	CellRef
	Figures result.Livelock
}

func livelocks(cells []result.Cell) []Livelock {
	var out []Livelock
	for _, g := range result.GroupCells(cells) {
		for _, c := range g.Cells {
			if c.Livelock != nil && c.Finding == result.FindingLivelock {
				out = append(out, Livelock{Ref(c), *c.Livelock})
			}
		}
	}
	return out
}
