package result

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseSLOThresholds(t *testing.T) {
	for _, tc := range []struct {
		in        string
		quantile  string
		limit     time.Duration
		canonical string
	}{
		{"p99<=5ms", "p99", 5 * time.Millisecond, "p99<=5ms"},
		{"p99=10ms", "p99", 10 * time.Millisecond, "p99<=10ms"},
		{"p99<=5ms, errors<=0.1%", "p99", 5 * time.Millisecond, "p99<=5ms,errors<=0.1%"},
		{"errors<3,P99.99<=20ms,acq/s>=1000", "p9999", 20 * time.Millisecond, "p99.99<=20ms,errors<3,acq/s>=1000"},
		{"p99.9<2ms,p50<=1ms", "p50", time.Millisecond, "p50<=1ms,p99.9<2ms"},
	} {
		slo, err := ParseSLO(tc.in)
		if err != nil {
			t.Errorf("ParseSLO(%q): %v", tc.in, err)
			continue
		}
		if slo.Quantile != tc.quantile || slo.Limit != tc.limit || slo.String() != tc.canonical {
			t.Errorf("ParseSLO(%q) = %s %v %q, want %s %v %q", tc.in, slo.Quantile, slo.Limit, slo.String(), tc.quantile, tc.limit, tc.canonical)
		}
		if again, err := ParseSLO(slo.String()); err != nil || again != slo {
			t.Errorf("ParseSLO(%q) = %v, %v; want it back as it was", slo.String(), again, err)
		}
	}
	for _, bad := range []string{"", "errors<=1%", "p99>=5ms", "p99<=5", "errors<=200%", "acq/s<=5", "p97<=1ms", "p99<=5ms,,errors<=1%"} {
		if _, err := ParseSLO(bad); !errors.Is(err, ErrSLO) {
			t.Errorf("ParseSLO(%q) error = %v, want ErrSLO", bad, err)
		}
	}
}

func TestBreaches(t *testing.T) {
	slo, err := ParseSLO("p99<=5ms,errors<=0.1%,acq/s>=100")
	if err != nil {
		t.Fatal(err)
	}
	cells := []Cell{
		{Impl: "a", Scenario: "hot", Clients: 1, Acquires: 1000, AcquiresPerS: 500, AcquireLatencyUs: Latency{P99: 4000}},
		{Impl: "a", Scenario: "hot", Clients: 4, Acquires: 1000, Errors: 2, AcquiresPerS: 500, AcquireLatencyUs: Latency{P99: 7200}},
		{Impl: "a", Scenario: "hot", Clients: 16, Acquires: 100, AcquiresPerS: 50, AcquireLatencyUs: Latency{P99: 5000}},
		{Impl: "a", Scenario: "hot", Clients: 64},
		{Impl: "a", Scenario: "crash", Kind: KindFault, Clients: 2, Acquires: 3, AcquireLatencyUs: Latency{P99: 9e6}},
	}
	got := Breaches(cells, slo)
	want := []struct {
		clients   int
		threshold string
		over      string
	}{
		{4, "p99<=5ms", "7.20ms against 5.00ms (+44%)"},
		{4, "errors<=0.1%", "0.2% against 0.1% (+100%)"},
		{16, "acq/s>=100", "50/s against 100/s (-50%)"},
		{64, "p99<=5ms", "no acquisitions"},
		{64, "acq/s>=100", "0/s against 100/s (-100%)"},
	}
	if len(got) != len(want) {
		t.Fatalf("Breaches = %+v, want %d", got, len(want))
	}
	for i, w := range want {
		if got[i].Clients != w.clients || got[i].Threshold != w.threshold || got[i].Over != w.over {
			t.Errorf("breach %d = %d %q %q, want %d %q %q", i, got[i].Clients, got[i].Threshold, got[i].Over, w.clients, w.threshold, w.over)
		}
	}
	if math.Abs(got[0].Excess-0.44) > 1e-9 || got[0].Value != 7200 || got[0].Limit != 5000 {
		t.Errorf("breach 0 = %+v, want value 7200 limit 5000 excess 0.44", got[0])
	}
}

// A cell that ended in a livelock missed the SLO whatever its few quick
// grants' latency (its capacity: judge's TestCapacityLeavesOutWhatCannotStand).
func TestALivelockMissesTheSLO(t *testing.T) {
	slo, err := ParseSLO("p99<=5ms")
	if err != nil {
		t.Fatal(err)
	}
	cells := []Cell{
		{Impl: "a", Scenario: "hot", Clients: 1, Acquires: 1000, AcquiresPerS: 500, AcquireLatencyUs: Latency{P99: 4000}},
		{Impl: "a", Scenario: "hot", Clients: 8, Acquires: 10, AcquiresPerS: 5, AcquireLatencyUs: Latency{P99: 1000}, Finding: FindingLivelock},
	}
	got := Breaches(cells, slo)
	if len(got) != 1 || got[0].Clients != 8 || got[0].Threshold != "finding" || !strings.Contains(got[0].Over, FindingLivelock) {
		t.Errorf("Breaches = %+v, want one naming the livelock of 8 clients", got)
	}
}

// A bad SLO's message is one clean line for a flag to carry: the
// threshold at fault once, no package prefix; an SLO of errors alone
// says how to check only errors, and that way parses.
func TestSLOErrorsReadCleanly(t *testing.T) {
	for in, want := range map[string]string{
		"p99<=banana":        `bad SLO "p99<=banana": want p99<=DURATION`,
		"p99<=1ms,errors<=x": `bad SLO "errors<=x": want errors<=0.1%`,
		"errors<=0":          `(to check only those, add a loose one: 'errors<=0,max<=1h')`,
	} {
		_, err := ParseSLO(in)
		if err == nil || !errors.Is(err, ErrSLO) || !strings.Contains(err.Error(), want) ||
			strings.HasPrefix(err.Error(), "result:") || strings.Count(err.Error(), `"`+in+`"`) > 1 {
			t.Errorf("ParseSLO(%q): %v; want one line with %q", in, err, want)
		}
	}
	if _, err := ParseSLO("errors<=0,max<=1h"); err != nil {
		t.Errorf("the loose form the message suggests: %v", err)
	}
}

// A near miss reads as a miss, and a large floor as a number.
func TestSLOMissesReadPlainly(t *testing.T) {
	slo, err := ParseSLO("p99<=1h,acq/s>=730")
	if err != nil {
		t.Fatal(err)
	}
	c := Cell{Impl: "x", Scenario: "hot", Clients: 1, Acquires: 100, AcquiresPerS: 728, AcquireLatencyUs: Latency{P99: 10}}
	b := Breaches([]Cell{c}, slo)
	if len(b) != 1 || !strings.Contains(b[0].Over, "(-0.3%)") {
		t.Errorf("728 against a floor of 730: %+v; want it -0.3%% under", b)
	}
	big, _ := ParseSLO("p99<=1h,acq/s>=1000000000")
	if s := big.String(); !strings.Contains(s, "acq/s>=1000000000") {
		t.Errorf("a floor of 1e9 reads %q", s)
	}
}
