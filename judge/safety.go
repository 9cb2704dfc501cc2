package judge

import "github.com/lockbench/lockbench/result"

// Safety is the run's mutual exclusion: the unsafe cells, each with what
// broke it, stale grants whose write a fencing token turned away (the
// remedy working, not a violation), and, for cells merged from shards,
// grants of two shards that overlapped by no more than the clocks' skew
// (neither proof of a violation nor of safety).
type Safety struct {
	Grants int64
	// Violations is the unsafe cells' overlaps, token regressions and
	// other breaches the checkers counted, in all.
	Violations int64
	// Unsafe are the cells Bad judged unsafe, in the cells' order.
	Unsafe []Unsafety
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
	// NotLinearizable are the cells whose recorded history no order of
	// its operations explains.
	NotLinearizable []CellRef
}

// Bad says the run broke mutual exclusion in some cell (see
// Unsafety.Bad).
func (s Safety) Bad() bool { return len(s.Unsafe) > 0 }

// Lost is how many updates the cells lost in all.
func (s Safety) Lost() int64 {
	var n int64
	for _, c := range s.LostUpdates {
		n += c.N
	}
	return n
}

// Unsafety is what broke mutual exclusion in one cell, by kind. It is
// the one meaning of unsafe: the exit status, the report's headline and
// Safety line, the fault sentences, merge and the capacity trial all ask
// Bad.
type Unsafety struct {
	CellRef
	// Overlaps and TokenRegressions are the overlap checker's, as the
	// cell's safety figures split them.
	Overlaps         int64
	TokenRegressions int64
	// Other is the violations counted in neither: a fault's stale write
	// accepted where the lock's users would write, or a checker's count
	// in a cell whose figures do not split it.
	Other int64
	// LostUpdates are the guarded counter's, on the counter the lock's
	// users would write.
	LostUpdates int64
	// NotLinearizable says no order of the recorded history's operations
	// explains it. A check that ran out of its budget decides nothing.
	NotLinearizable bool
}

// Bad says the cell broke mutual exclusion: an overlap, a token out of
// order, another violation, a lost update where the lock's users would
// write, or a history that is not linearizable.
func (u Unsafety) Bad() bool {
	return u.Violations() > 0 || u.LostUpdates > 0 || u.NotLinearizable
}

// Violations is the cell's overlaps, token regressions and other
// violations together.
func (u Unsafety) Violations() int64 { return u.Overlaps + u.TokenRegressions + u.Other }

// CellSafety judges one cell's mutual exclusion.
func CellSafety(c result.Cell) Unsafety {
	u := Unsafety{CellRef: Ref(c), LostUpdates: c.Safety.UsersLost()}
	if s := c.Safety; s != nil {
		u.Overlaps, u.TokenRegressions = s.Overlaps, s.TokenRegressions
		u.NotLinearizable = s.Linearizable == result.NotLinearizable
	}
	u.Other = max(c.SafetyViolations-u.Overlaps-u.TokenRegressions, 0)
	return u
}

// UnsafeCells are the cells that broke mutual exclusion, in order.
func UnsafeCells(cells []result.Cell) []Unsafety {
	var out []Unsafety
	for _, c := range cells {
		if u := CellSafety(c); u.Bad() {
			out = append(out, u)
		}
	}
	return out
}

func judgeSafety(cells []result.Cell) Safety {
	var s Safety
	for _, c := range cells {
		s.Grants += c.Acquires
		u := CellSafety(c)
		if u.Bad() {
			s.Unsafe = append(s.Unsafe, u)
			s.Violations += u.Violations()
		}
		if n := FencedStale(c); n > 0 {
			s.Fenced += n
			s.FencedBy = append(s.FencedBy, Ref(c))
		}
		if u.LostUpdates > 0 {
			s.LostUpdates = append(s.LostUpdates, Count{Ref(c), u.LostUpdates})
		}
		if u.NotLinearizable {
			s.NotLinearizable = append(s.NotLinearizable, Ref(c))
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
	if c.Faults == nil || CellSafety(c).Bad() || StaleWrites(c.Faults) == 0 {
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
