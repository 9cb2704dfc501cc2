// Package allocs counts a function's heap allocations over many runs, in
// all. testing.AllocsPerRun divides by the runs in integers, so a path that
// allocates once every other run reads 0 there; a test that a path
// allocates nothing asserts the total instead.
package allocs

import "runtime"

// Total runs f once to warm it, then runs times more with one P (as
// testing.AllocsPerRun does, so that other goroutines barely run), and
// returns the heap allocations the runs made.
func Total(runs int, f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}
