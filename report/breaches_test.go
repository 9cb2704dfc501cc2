package report

import (
	"math"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
)

func TestBreaches(t *testing.T) {
	slo, err := result.ParseSLO("p99<=5ms,errors<=0.1%,acq/s>=100")
	if err != nil {
		t.Fatal(err)
	}
	cells := []result.Cell{
		{Impl: "a", Scenario: "hot", Clients: 1, Acquires: 1000, AcquiresPerS: 500, AcquireLatencyUs: result.Latency{P99: 4000}},
		{Impl: "a", Scenario: "hot", Clients: 4, Acquires: 1000, Errors: 2, AcquiresPerS: 500, AcquireLatencyUs: result.Latency{P99: 7200}},
		{Impl: "a", Scenario: "hot", Clients: 16, Acquires: 100, AcquiresPerS: 50, AcquireLatencyUs: result.Latency{P99: 5000}},
		{Impl: "a", Scenario: "hot", Clients: 64},
		{Impl: "a", Scenario: "crash", Kind: result.KindFault, Clients: 2, Acquires: 3, AcquireLatencyUs: result.Latency{P99: 9e6}},
	}
	got := judge.Breaches(cells, slo)
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
		if got[i].Clients != w.clients || got[i].Threshold != w.threshold || BreachWords(got[i]) != w.over {
			t.Errorf("breach %d = %d %q %q, want %d %q %q", i, got[i].Clients, got[i].Threshold, BreachWords(got[i]), w.clients, w.threshold, w.over)
		}
	}
	if math.Abs(got[0].Excess-0.44) > 1e-9 || got[0].Value != 7200 || got[0].Limit != 5000 {
		t.Errorf("breach 0 = %+v, want value 7200 limit 5000 excess 0.44", got[0])
	}
}

// A cell that ended in a livelock missed the SLO whatever its few quick
// grants' latency (its capacity: judge's TestCapacityLeavesOutWhatCannotStand).
func TestALivelockMissesTheSLO(t *testing.T) {
	slo, err := result.ParseSLO("p99<=5ms")
	if err != nil {
		t.Fatal(err)
	}
	cells := []result.Cell{
		{Impl: "a", Scenario: "hot", Clients: 1, Acquires: 1000, AcquiresPerS: 500, AcquireLatencyUs: result.Latency{P99: 4000}},
		{Impl: "a", Scenario: "hot", Clients: 8, Acquires: 10, AcquiresPerS: 5, AcquireLatencyUs: result.Latency{P99: 1000}, Finding: result.FindingLivelock},
	}
	got := judge.Breaches(cells, slo)
	if len(got) != 1 || got[0].Clients != 8 || got[0].Threshold != "finding" || !strings.Contains(BreachWords(got[0]), result.FindingLivelock) {
		t.Errorf("Breaches = %+v, want one naming the livelock of 8 clients", got)
	}
}

// A near miss reads as a miss, and a large floor as a number.
func TestSLOMissesReadPlainly(t *testing.T) {
	slo, err := result.ParseSLO("p99<=1h,acq/s>=730")
	if err != nil {
		t.Fatal(err)
	}
	c := result.Cell{Impl: "x", Scenario: "hot", Clients: 1, Acquires: 100, AcquiresPerS: 728, AcquireLatencyUs: result.Latency{P99: 10}}
	b := judge.Breaches([]result.Cell{c}, slo)
	if len(b) != 1 || !strings.Contains(BreachWords(b[0]), "(-0.3%)") {
		t.Errorf("728 against a floor of 730: %+v; want it -0.3%% under", b)
	}
	big, _ := result.ParseSLO("p99<=1h,acq/s>=1000000000")
	if s := big.String(); !strings.Contains(s, "acq/s>=1000000000") {
		t.Errorf("a floor of 1e9 reads %q", s)
	}
}

// A failed trial's reasons read one after another, each with its figures,
// as the capacity search prints them.
func TestTrialWhy(t *testing.T) {
	slo, err := result.ParseSLO("p99<=10ms,errors<=0.1%")
	if err != nil {
		t.Fatal(err)
	}
	c := result.Cell{Scenario: "rate", Kind: result.KindOpen, Acquires: 1000, Errors: 30, AcquireLatencyUs: result.Latency{P99: 25000},
		Open: &result.OpenLoop{Offered: 1030, Dropped: 2}, Truncated: "time"}
	want := "p99<=10ms: 25.0ms against 10.0ms (2.5×); errors<=0.1%: 2.91% against 0.1% (29.1×); 2 of 1030 arrivals dropped; 30 errors; cut short: time"
	if got := TrialWhy(judge.Trial(c, slo)); got != want {
		t.Errorf("TrialWhy:\n got %s\nwant %s", got, want)
	}
	if got := TrialWhy(judge.Trial(result.Cell{Scenario: "rate", Finding: result.FindingLivelock}, slo)); got != "no acquisitions; p99<=10ms: no acquisitions; "+result.FindingLivelock {
		t.Errorf("an empty livelocked trial: %q", got)
	}
}

// A breach kept from an older summary, with its words and no kind, reads
// as it was written.
func TestBreachWordsOfAnOlderSummary(t *testing.T) {
	b := result.Breach{Threshold: "finding", Over: "the cell ended in livelock"}
	if got := BreachWords(b); got != b.Over {
		t.Errorf("%q", got)
	}
}
