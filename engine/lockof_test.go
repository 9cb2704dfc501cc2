package engine

import "testing"

// lockOf answers as lockIndex does, whichever name came before: the one
// it keeps, another, one of another form, or none.
func TestLockOfAnswersAsLockIndex(t *testing.T) {
	var w Client
	for _, name := range []string{"", "lock-3", "lock-3", "lock-12", "lock-3", "other", "", "lock-0", "lock-0", "x-7"} {
		if got, want := w.lockOf(name), lockIndex(name); got != want {
			t.Errorf("lockOf(%q) = %d after %q, want %d", name, got, w.lockName, want)
		}
	}
}
