package result

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// sloSeeds are the README's and the tests' SLOs, and every input known to
// have gone wrong: a NaN or an infinite limit, which was accepted and then
// failed writing summary.json.
var sloSeeds = []string{
	"p99<=5ms", "p99<=250ms", "errors<=0,max<=1h", "p99=10ms", "p50=250us", "P99.9=20ms", " p99 = 10ms ",
	"p99<=5ms,errors<=0.1%", "errors<3,P99.99<=20ms,acq/s>=1000", "p50<=1ms,p99.9<2ms",
	"p99<=1h,acq/s>=1000000000", "p99<=1h,acq/s>=730/s", "p99<=10ms,throughput>1",
	"p99<=1h,errors<=NaN", "p99<=1h,errors<=Inf", "p99<=1h,errors<=NaN%", "p99<=1h,acq/s>=NaN",
	"p99<=1h,acq/s>=+Inf", "p99<=2562047h47m16.854775807s", "p99<=1001ns,p50<1001ns,errors<=0.07%",
	"p99=-1ms", "p99=0s", "p99=10", "p97=10ms", "errors<=200%", "acq/s<=5", "", ",", "p99<=",
}

// FuzzParseSLO checks what an accepted --slo promises: its text reads back
// as the same SLO, every threshold re-parses from its own text, and every
// limit is a finite number that summary.json can hold.
func FuzzParseSLO(f *testing.F) {
	for _, s := range sloSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			if slo != (SLO{}) {
				t.Fatalf("ParseSLO(%q) failed (%v) but returned %+v", s, err, slo)
			}
			if !strings.Contains(err.Error(), "bad SLO") {
				t.Fatalf("ParseSLO(%q) error %q does not say what is wrong", s, err)
			}
			return
		}
		if slo.Limit <= 0 || !isLatencyMetric(slo.Quantile) {
			t.Fatalf("ParseSLO(%q) = %+v: the capacity threshold is not a positive latency", s, slo)
		}
		back, err := ParseSLO(slo.String())
		if err != nil || back != slo {
			t.Fatalf("ParseSLO(%q).String() = %q reads back as %+v, %v; want %+v", s, slo.String(), back, err, slo)
		}
		ts := slo.Thresholds()
		if got := len(ts); got != strings.Count(s, ",")+1 {
			t.Fatalf("ParseSLO(%q) has %d thresholds, want one per comma-separated part", s, got)
		}
		for _, th := range ts {
			again, err := parseThreshold(th.String())
			if err != nil || again != th {
				t.Fatalf("threshold %+v of %q reads back from %q as %+v, %v", th, s, th.String(), again, err)
			}
			if math.IsNaN(th.Limit) || math.IsInf(th.Limit, 0) || th.Limit < 0 {
				t.Fatalf("threshold %q of %q has limit %v", th.String(), s, th.Limit)
			}
		}
		b := Breach{Threshold: ts[0].String(), Limit: ts[len(ts)-1].Limit}
		if _, err := json.Marshal(Summary{SLO: slo.String(), SLOBreaches: []Breach{b}}); err != nil {
			t.Fatalf("ParseSLO(%q): summary.json cannot hold it: %v", s, err)
		}
	})
}
