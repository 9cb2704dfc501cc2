package report

import (
	"github.com/lockbench/lockbench/result"

	"fmt"
	"math"
	"strconv"
	"strings"
)

// benchTxt renders bench.txt in the Go benchmark format, so that
// `benchstat old/bench.txt new/bench.txt` compares two runs. One line per
// cell, named BenchmarkLock/impl=…/scenario=…/clients=…, with the
// acquisitions as iterations. Only configuration that stays the same
// between comparable runs goes in the header: benchstat splits its tables
// on any key that differs, so no dates or versions. Cells without
// acquisitions have no ns/op and are left out.
func benchTxt(meta result.Meta, cells []Cell) []byte {
	var b strings.Builder
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
		fmt.Fprintf(&b, "BenchmarkLock/impl=%s/scenario=%s/clients=%d %d %s ns/op %s acquires/s %s p50-ns %s p99-ns %s notifications/op %s retries/op\n",
			benchName(c.Impl), benchName(c.Scenario), c.Clients, c.Acquires,
			benchFloat(1e9/c.AcquiresPerS), benchFloat(c.AcquiresPerS),
			benchFloat(c.AcquireLatencyUs.P50*1000), benchFloat(c.AcquireLatencyUs.P99*1000),
			benchFloat(c.NotificationsPerAcquire), benchFloat(c.RetriesPerAcquire))
	}
	return []byte(b.String())
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
