package report

import (
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"

	"fmt"
	"math"
	"strconv"
	"strings"
)

// benchTxt renders bench.txt in the Go benchmark format, so that
// `benchstat old/bench.txt new/bench.txt` compares two runs. Each cell is
// a benchmark named BenchmarkLock/impl=…/scenario=…/clients=…, with one
// line per interval of its .hlog (the acquisitions in that interval as
// iterations), so that benchstat has several samples and can tell a
// change from noise instead of printing ± ∞; a cell without a log, or with
// fewer than two intervals, has one line for the whole cell. Intervals
// are those compare uses (hlog.CellLog.IntervalSamples): the cell's
// stub at the end and empty seconds are left out. Notifications and
// retries are counted per cell, not per interval: each line carries the
// cell's. Only configuration that stays the same between comparable runs
// goes in the header: benchstat splits its tables on any key that
// differs, so no dates or versions. Cells without acquisitions have no
// ns/op and are left out.
//
// A partial result carries a PartialBenchKey line naming what it lacks:
// benchstat shows it as configuration, and benchcheck refuses the file.
func benchTxt(meta result.Meta, cells []Cell, logs map[string]*CellDigest, partial *result.Partial) []byte {
	var b strings.Builder
	if partial != nil {
		fmt.Fprintf(&b, "%s: %s\n", PartialBenchKey, strings.ReplaceAll(partial.Label(), "\n", " "))
	}
	goos, goarch := meta.Host["os"], meta.Host["arch"]
	if goos != "" {
		fmt.Fprintf(&b, "goos: %s\n", goos)
	}
	if goarch != "" {
		fmt.Fprintf(&b, "goarch: %s\n", goarch)
	}
	b.WriteString("pkg: lockbench\n")
	for _, c := range cells {
		if c.Acquires <= 0 || c.AcquiresPerS <= 0 {
			continue
		}
		name := fmt.Sprintf("BenchmarkLock/impl=%s/scenario=%s/clients=%d", benchName(c.Impl), benchName(c.Scenario), c.Clients)
		var samples []hlog.IntervalSample
		for _, s := range logs[c.Key()].IntervalSamples(result.TagAcquire) {
			if s.N > 0 && s.PerS > 0 {
				samples = append(samples, s)
			}
		}
		if len(samples) < 2 {
			writeBenchLine(&b, name, c.Acquires, c.AcquiresPerS, c.AcquireLatencyUs.P50, c.AcquireLatencyUs.P99, c)
			continue
		}
		for _, s := range samples {
			writeBenchLine(&b, name, s.N, s.PerS, s.P50, s.P99, c)
		}
	}
	return []byte(b.String())
}

// PartialBenchKey is the configuration key of bench.txt's line saying the
// results are partial.
const PartialBenchKey = "lockbench-partial"

// writeBenchLine writes one sample: n acquisitions at perS, its p50 and p99 in
// µs, and the cell's notifications and retries per acquisition.
func writeBenchLine(b *strings.Builder, name string, n int64, perS, p50, p99 float64, c Cell) {
	fmt.Fprintf(b, "%s %d %s ns/op %s acquires/s %s p50-ns %s p99-ns %s notifications/op %s retries/op\n",
		name, n, benchFloat(1e9/perS), benchFloat(perS), benchFloat(p50*1000), benchFloat(p99*1000),
		benchFloat(c.NotificationsPerAcquire), benchFloat(c.RetriesPerAcquire))
}

// benchName keeps a name part to one field without a slash or an equals
// sign, which would change the name's key=value structure.
func benchName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '=' || r <= ' ' {
			return '-'
		}
		return r
	}, s)
}

// benchFloat prints a value with enough digits for benchstat and few
// enough to read: integers as they are, large values to one decimal.
func benchFloat(x float64) string {
	switch {
	case x == math.Trunc(x) && math.Abs(x) < 1e15:
		return strconv.FormatInt(int64(x), 10)
	case math.Abs(x) >= 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}
