package report

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/result"
)

// deadWaitSentence phrases the deadwait scenario: the stall behind the
// dead waiters, per dead waiter, against how long the lock lets a dead
// waiter hold its place.
func deadWaitSentence(c Cell) string {
	d := c.Faults.DeadWaiters
	dead := countOf(int64(d.Dead), "dead waiter")
	bound := "nothing of a dead waiter outlives it (a poller keeps nothing queued; a server's queue drops it with its connection)"
	if d.BoundMs > 0 {
		bound = fmt.Sprintf("the lock keeps a dead waiter's place for %s (%s)", setting(d.BoundMs), d.BoundSetting)
	}
	s := fmt.Sprintf("%s: behind %s, the live waiter held the lock after the release in %s", c.Impl, dead, stallWords(d.Reset, d.Dead))
	if d.Silent != nil {
		s += fmt.Sprintf("; with their connections silent instead of reset, %s", stallWords(*d.Silent, d.Dead))
	}
	return s + "; " + bound + "; " + violationsClause(c)
}

func stallWords(e result.DeadEnd, dead int) string {
	var s string
	if e.StallMs != nil {
		s = fmt.Sprintf("%s p50 (%s per dead waiter), %s max over %s", faultMs(e.StallMs.P50), faultMs(e.PerDeadMs(dead)), faultMs(e.StallMs.Max),
			countOf(e.StallMs.Count, "repeat"))
	}
	if e.Unfreed > 0 {
		if s != "" {
			s += ", and "
		}
		s += fmt.Sprintf("not within %s in %s", time.Duration(e.WaitMs*float64(time.Millisecond)).Round(time.Second), countOf(e.Unfreed, "repeat"))
	}
	return s
}
