package report

import (
	"bytes"
	"path/filepath"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// TestBenchTxtHasSamplesPerInterval reads bench.txt with benchstat's own
// parser: every cell that ran two seconds or more is a benchmark with a
// sample per interval, so benchstat has a spread to test against.
func TestBenchTxtHasSamplesPerInterval(t *testing.T) {
	t.Parallel()
	sum := fixtureSummary()
	dir, _ := renderFixture(t, sum, true, RenderOptions{})
	data := readFile(t, filepath.Join(dir, BenchFile))
	samples := map[string]int{}
	iters := map[string]int{}
	r := benchfmt.NewReader(bytes.NewReader(data), BenchFile)
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatal(rec)
		case *benchfmt.Result:
			name := "Benchmark" + string(rec.Name.Full())
			samples[name]++
			iters[name] += rec.Iters
			if v, ok := rec.Value("sec/op"); !ok || v <= 0 {
				t.Errorf("%s: no positive time per acquisition", name)
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range sum.Cells {
		if c.DurationS < 2 || c.Acquires == 0 {
			continue
		}
		checked++
		name := "BenchmarkLock/" + c.Key()
		if samples[name] < 2 {
			t.Errorf("%s: %d samples, want one per interval (≥ 2)", name, samples[name])
		}
	}
	if checked == 0 {
		t.Fatal("the fixture has no cell of two seconds or more")
	}
}
