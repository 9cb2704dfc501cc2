package benchcheck

import (
	"math"
	"strings"
	"testing"
)

// FuzzParseLimit checks what an accepted --limit promises: a unit, and a
// finite, non-negative relative change that can trip.
func FuzzParseLimit(f *testing.F) {
	for _, s := range []string{"p99-ns=25%", "notifications/op=10%", "notifications/op=0.1", "acquires/s=-10%",
		"p99-ns=+5%", "p99-ns=NaN", "p99-ns=Inf%", "p99-ns=-Inf", "=5%", "p99-ns=", "p99-ns", "a=b=c", "x=--5%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLimit(s)
		if err != nil {
			if !strings.Contains(err.Error(), "limit") {
				t.Fatalf("ParseLimit(%q): %v does not say which flag", s, err)
			}
			return
		}
		if l.Unit == "" || math.IsNaN(l.Max) || math.IsInf(l.Max, 0) || l.Max < 0 {
			t.Fatalf("ParseLimit(%q) accepted %+v", s, l)
		}
	})
}

// benchSeeds are go test -bench outputs: a real one, a skipped and a
// failed benchmark, and lines that are almost results.
var benchSeeds = []string{
	"goos: linux\nBenchmarkLock/impl=redis/scenario=hot/clients=4-2  200  50000 ns/op  20000 acquires/s  300000 p99-ns  0 notifications/op\nPASS\n",
	"BenchmarkLock/impl=zk-pred/scenario=hot/clients=4-2   200  500000 ns/op  1.00 notifications/op\n",
	"BenchmarkX-2  0  NaN ns/op\n", "BenchmarkX-2  10  NaN ns/op\n", "BenchmarkX-2  10  +Inf p99-ns\n",
	"--- FAIL: BenchmarkX\nFAIL\n", "BenchmarkX 1\n", "BenchmarkX-2 1 5 \n", "", "Benchmark\n", "BenchmarkX-2 -1 5 ns/op\n",
}

// FuzzRead checks what benchcheck reads from bench text: an error names
// the file, and every value it returns is a finite number under a named
// benchmark and unit — a NaN or an infinity compares as no change and
// would let any regression through.
func FuzzRead(f *testing.F) {
	for _, s := range benchSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Read(strings.NewReader(s), "old.txt")
		if err != nil {
			if !strings.Contains(err.Error(), "old.txt") {
				t.Fatalf("Read(%q): %v does not name the file", s, err)
			}
			return
		}
		for bench, units := range got {
			if !strings.HasPrefix(bench, "Benchmark") {
				t.Fatalf("Read(%q): benchmark %q", s, bench)
			}
			for unit, vs := range units {
				for _, v := range vs {
					if unit == "" || math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("Read(%q): %s %q = %v", s, bench, unit, v)
					}
				}
			}
		}
	})
}
