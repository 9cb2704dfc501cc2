package report

import "github.com/lockbench/lockbench/result"

// waking is how an implementation's waiters learn of a release, as far as
// the data says: the theory its cells carry, or polling when it retried
// and was never notified.
type waking struct {
	theory  *result.Theory
	polling bool
}

func (w waking) known() bool { return w.theory != nil || w.polling }

// wakingOf reads how an implementation's waiters learn of a release from
// its cells, so that a results directory renders the same anywhere.
func wakingOf(name string, cells []Cell) waking {
	var retries, notes int64
	for _, c := range cells {
		if c.Impl != name {
			continue
		}
		if t := c.TheoryOf(); t != nil {
			return waking{theory: t}
		}
		retries += c.Retries
		notes += c.Notifications + c.Wakeups
	}
	return waking{polling: retries > 0 && notes == 0}
}

// theoryFormula names the formula behind a burst cell's theory, for
// sentences: "n(n−1)/2", "n−1", or "" when the cell does not say.
func theoryFormula(c Cell) string {
	if t := c.TheoryOf(); t != nil && !leavingQueue(c) {
		return t.Formula
	}
	return ""
}

// notificationTheory is what theory predicts for notifications per
// acquisition in a closed loop of n clients on one lock: the release
// wake-ups of one hand-off with n waiting.
func notificationTheory(w waking, n int) (float64, bool) {
	if w.theory == nil || n < 2 {
		return 0, false
	}
	return w.theory.PerHandoff(float64(n)), true
}

// releaseWakeups is the wake-up count a burst cell is judged by: release
// wake-ups when the implementation tells them apart, else all wake-ups. A
// cell with a theory is judged by release wake-ups alone, even at 0: every
// driver with a theory counts them, so 0 there is a broken counter, and
// falling back to another count would hide it behind a ✓.
func releaseWakeups(c Cell) (n int64, what string) {
	if c.ReleaseWakeups > 0 || c.TheoryOf() != nil {
		return c.ReleaseWakeups, "release wake-ups"
	}
	return c.Wakeups, "wake-ups"
}
