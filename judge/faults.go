package judge

import "github.com/lockbench/lockbench/result"

// Fault is what one fault cell cost: how long the lock took to pass on,
// and whether a stale holder's write got through.
type Fault struct {
	CellRef
	Cell result.Cell
	// Unsafety is what broke mutual exclusion; StaleRepeats and Fenced:
	// repeats that ended in a stale write, and stale grants whose write
	// the fencing token turned away.
	Unsafety     Unsafety
	StaleRepeats int64
	Fenced       int64
}

// Bad says the fault broke mutual exclusion.
func (f Fault) Bad() bool { return f.Unsafety.Bad() }

func faults(cells []result.Cell) []Fault {
	var out []Fault
	for _, c := range cells {
		if c.KindOf() != result.KindFault || c.Faults == nil {
			continue
		}
		out = append(out, Fault{CellRef: Ref(c), Cell: c, Unsafety: CellSafety(c),
			StaleRepeats: StaleWrites(c.Faults), Fenced: FencedStale(c)})
	}
	return out
}
