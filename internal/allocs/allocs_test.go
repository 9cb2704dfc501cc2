package allocs

import "testing"

var sink []byte

// One allocation every other run is 500 in 1000 runs, where
// testing.AllocsPerRun reads 0.
func TestTotalCountsWhatPerRunRoundsAway(t *testing.T) {
	i := 0
	f := func() {
		if i++; i%2 == 0 {
			sink = make([]byte, 64)
		}
	}
	if n := Total(1000, f); n < 500 || n > 502 {
		t.Errorf("Total: %d allocations in 1000 runs, want 500", n)
	}
	if n := Total(1000, func() { i++ }); n != 0 {
		t.Errorf("Total: %d allocations of a function that makes none", n)
	}
}
