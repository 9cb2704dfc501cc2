package engine

import (
	"strings"
	"testing"
)

// FuzzRampStairs checks a ramp's promise for any --ramp and client count:
// the stairs rise strictly, start at the ramp's start (or at the clients,
// if fewer), never pass the clients and end on them. The input,
// 1:9223372036854775807:200ms, overflowed the count and panicked in
// RunRamp.
func FuzzRampStairs(f *testing.F) {
	for _, s := range []string{"8:8:5s", "4:4:5s", "1:2:1s", "1:9223372036854775807:200ms",
		"9223372036854775807:1:1s", "1:1:1ns", "0:1:1s", "1:0:1s", "1:1:0s", "1:1", "a:b:c", "1:1:1s:1"} {
		for _, top := range []int{1, 4, 6, 64, 1 << 20} {
			f.Add(s, top)
		}
	}
	f.Fuzz(func(t *testing.T, s string, top int) {
		r, err := ParseRamp(s)
		if err != nil {
			if !strings.Contains(err.Error(), "ramp") {
				t.Fatalf("ParseRamp(%q) error %q does not name the flag", s, err)
			}
			return
		}
		if r.Start < 1 || r.Step < 1 || r.Every <= 0 {
			t.Fatalf("ParseRamp(%q) accepted %+v", s, r)
		}
		if top < 1 || top > 1<<20 || top/r.Step > 1<<16 {
			return // a plan has at least one client; the staircase is bounded in memory
		}
		stairs := r.Stairs(top)
		if len(stairs) == 0 || stairs[0] != min(r.Start, top) || stairs[len(stairs)-1] != top {
			t.Fatalf("ramp %q to %d: stairs %v, want %d … %d", s, top, stairs, min(r.Start, top), top)
		}
		for i := 1; i < len(stairs); i++ {
			if stairs[i] <= stairs[i-1] || stairs[i] > top {
				t.Fatalf("ramp %q to %d: stairs %v do not rise within 1..%d", s, top, stairs, top)
			}
			if i < len(stairs)-1 && stairs[i]-stairs[i-1] != r.Step {
				t.Fatalf("ramp %q to %d: stairs %v are not %d apart", s, top, stairs, r.Step)
			}
		}
	})
}
