package judge

import (
	"math"
	"time"

	"github.com/lockbench/lockbench/result"
)

// LittleTolerance is how far off Little's law a cell may be before it
// lost time where nothing measures it (LittleOff).
const LittleTolerance = 0.10

// latencyResolution is how finely a cell's latencies are recorded: whole
// microseconds, each acquire and release rounded by up to one.
const latencyResolution = time.Microsecond

// LittleCheck checks a closed-loop cell against Little's law, given the
// mean hold and think time its clients were told to take (a cell does not
// record them): the figures, without a note. Cells of other kinds, or
// without throughput, are not checked: the zero result.Little. Nor is a
// cycle so short that the latencies' rounding alone could put it off by
// LittleTolerance (the in-process lock's, under a microsecond: its
// latencies read 1 µs and the law 6× off).
func LittleCheck(c result.Cell, hold, think time.Duration) result.Little {
	if c.KindOf() != result.KindClosed || c.AcquiresPerS <= 0 || c.Clients <= 0 {
		return result.Little{}
	}
	cycle := (c.AcquireLatencyUs.Mean+c.ReleaseLatencyUs.Mean)/1e6 + hold.Seconds() + think.Seconds()
	if 2*latencyResolution.Seconds() > LittleTolerance*cycle {
		return result.Little{}
	}
	l := result.Little{Expected: c.AcquiresPerS * cycle, Clients: c.Clients}
	// A shard's cell counts the whole cell's clients, its throughput only
	// its own clients'.
	if c.Shard != nil && c.Shard.Clients > 0 {
		l.Clients = c.Shard.Clients
	}
	l.Off = l.Expected/float64(l.Clients) - 1
	return l
}

// LittleOff says a cell is further off Little's law than LittleTolerance.
func LittleOff(l result.Little) bool { return l.Clients > 0 && math.Abs(l.Off) > LittleTolerance }
