package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/capacity"
	"github.com/lockbench/lockbench/result"
)

func TestCapacityVerdicts(t *testing.T) {
	t.Parallel()
	slo, _ := result.ParseSLO("p99<=10ms")
	for _, tc := range []struct {
		s    result.CapacitySearch
		want string
	}{
		{result.CapacitySearch{Impl: "redis", Rate: 12437.5, Confirmed: true, Missed: 13059.4},
			"redis: 12,400 acq/s at p99 ≤ 10 ms (±5 %, confirmed; 13,100 missed)"},
		{result.CapacitySearch{Impl: "redis", Rate: 800, Note: "stopped after 30 trials (the trial budget)"},
			"redis: 800 acq/s at p99 ≤ 10 ms (±5 %, not confirmed: stopped after 30 trials (the trial budget))"},
		{result.CapacitySearch{Impl: "etcd", Note: "no rate down to 1/s passed"},
			"etcd: no rate met p99 ≤ 10 ms (no rate down to 1/s passed)"},
		{result.CapacitySearch{Impl: "redis", Rate: 40000, Limit: "schedule lag p99 3ms"},
			"redis: at least 40,000 acq/s at p99 ≤ 10 ms — the search stopped where the trials stopped measuring the lock (schedule lag p99 3ms); the lock may carry more"},
		{result.CapacitySearch{Impl: "redis", Limit: "schedule lag p99 45ms", Trials: []result.SearchTrial{{Rate: 500}, {Rate: 15.625}}},
			"redis: no capacity claimed: no rate met p99 ≤ 10 ms down to 15.6/s, where the trials stopped measuring the lock (schedule lag p99 45ms): measure on a quieter machine"},
		// Confirmed, and the tails decided the bracket's both ends: no range.
		{result.CapacitySearch{Impl: "zk-pred", Rate: 1000, Confirmed: true, Missed: 1050, Low: 1000, High: 1050},
			"zk-pred: 1,000 acq/s at p99 ≤ 10 ms (±5 %, confirmed; 1,050 missed)"},
		// Confirmed, but the tails decided only wider.
		{result.CapacitySearch{Impl: "etcd", Rate: 80, Confirmed: true, Missed: 84, Low: 62.5, High: 125},
			"etcd: 80 acq/s at p99 ≤ 10 ms (confirmed; 84 missed; 95 %: 62.5–125/s)"},
		// Sampled: the bracket's ends were too close to call.
		{result.CapacitySearch{Impl: "redis", Rate: 93.75, Missed: 125, Low: 62.5, High: 133, Note: "94/s and 125/s were too close to call with 4000 arrivals each"},
			"redis: 93.8 acq/s at p99 ≤ 10 ms (95 %: 62.5–133/s; not to ±5 %: 94/s and 125/s were too close to call with 4000 arrivals each)"},
		{result.CapacitySearch{Impl: "redis", Rate: 93.75, Missed: 125, Low: 62.5, Note: "…"},
			"redis: 93.8 acq/s at p99 ≤ 10 ms (95 %: at least 62.5/s; not to ±5 %: …)"},
	} {
		if got := SearchVerdict(tc.s, slo, 0.05); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
	k := result.Knee{Impl: "zk-pred", Points: []result.KneePoint{{Clients: 1}, {Clients: 64}},
		Fit: &result.USLFit{Lambda: 300, Sigma: 0.03, Kappa: 0.0004, NStar: 24.6, Peak: 1130, R2: 0.981}}
	if got, want := KneeVerdict(k), "zk-pred: best at 25 clients, peak 1,130 acq/s (σ 0.03, κ 0.0004, R² 0.98)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestRenderCapacityWritesPlots(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rep := &result.CapacityReport{SLO: "p99<=10ms", Precision: 0.05,
		Searches: []result.CapacitySearch{{Impl: "redis", Rate: 1000, Confirmed: true, Missed: 1050, Trials: []result.SearchTrial{
			{Rate: 500, LatencyUs: 800, Pass: true}, {Rate: 1000, LatencyUs: 9000, Pass: true}, {Rate: 2000, LatencyUs: 80000}}}},
		Knees: []result.Knee{{Impl: "zk-pred", Scenario: "hot", Points: []result.KneePoint{{Clients: 1, AcquiresPerS: 300}, {Clients: 2, AcquiresPerS: 550}, {Clients: 4, AcquiresPerS: 700}},
			Fit: &result.USLFit{Lambda: 300, Sigma: 0.1, Kappa: 0.01, NStar: 9.5, Peak: 900, R2: 0.99}}},
	}
	files, err := RenderCapacity(dir, rep)
	if err != nil || len(files) != 2 {
		t.Fatalf("files %v, err %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("%s is not a PNG: %v", f, err)
		}
	}
	if !strings.HasSuffix(files[0], filepath.Join("plots", "capacity-rate-redis.png")) {
		t.Errorf("files %v", files)
	}
	var b bytes.Buffer
	WriteCapacitySearch(&b, rep)
	if !strings.HasPrefix(b.String(), "redis: 1,000 acq/s") || !strings.Contains(b.String(), "FAIL") {
		t.Errorf("text:\n%s", b.String())
	}
}

// Contention σ at its bound of 1 puts √((1−σ)/κ) at zero: throughput
// falls from the first client on, so the best is one, not "no peak".
func TestKneeVerdictOfAFitFallingFromOneClient(t *testing.T) {
	t.Parallel()
	k := result.Knee{Impl: "zk-naive", Points: []result.KneePoint{{Clients: 1}, {Clients: 128}},
		Fit: &result.USLFit{Lambda: 946, Sigma: 1, Kappa: 0.11, NStar: 0, Peak: 946, R2: 0.99}}
	if got, want := KneeVerdict(k), "zk-naive: best at 1 client, peak 946 acq/s (σ 1, κ 0.11, R² 0.99)"; got != want {
		t.Errorf("verdict %q, want %q", got, want)
	}
}

func TestTailWhyNamesTheWaitStep(t *testing.T) {
	t.Parallel()
	slo, _ := result.ParseSLO("p99<=10ms")
	s := result.CapacitySearch{Impl: "etcd", Rate: 40, Wait: "the server's next resync, up to 100 ms later",
		Trials: []result.SearchTrial{
			{Rate: 40, LatencyUs: 900, Pass: true},
			{Rate: 80, LatencyUs: 104000, Why: "p99 over"},
			{Rate: 60, LatencyUs: 300000, Why: "p99 over", Limit: "machine busy: …"}, // not the lock's: left out
			{Rate: 50, LatencyUs: 98000, Why: "p99 over"},
		}}
	why := TailWhy(s, slo)
	if !strings.Contains(why, "to 104.0ms in the trials that failed") || !strings.Contains(why, "waits for the server's next resync") {
		t.Errorf("TailWhy = %q", why)
	}
	var b strings.Builder
	WriteCapacitySearch(&b, &result.CapacityReport{SLO: "p99<=10ms", Precision: 0.05, Searches: []result.CapacitySearch{s}})
	if lines := strings.Split(b.String(), "\n"); len(lines) < 2 || lines[1] != "  "+why {
		t.Errorf("the reason does not follow the verdict:\n%s", b.String())
	}
	for name, s := range map[string]result.CapacitySearch{
		"no declared wait":   {Trials: s.Trials},
		"no latency failure": {Wait: "x", Trials: []result.SearchTrial{{Rate: 9, LatencyUs: 900, Pass: true}, {Rate: 12, LatencyUs: 900, Why: "12 dropped"}}},
	} {
		if why := TailWhy(s, slo); why != "" {
			t.Errorf("%s: TailWhy = %q, want nothing", name, why)
		}
	}
}

// A trial's line says when its arrivals over the limit came in bursts,
// and what they were worth, pooled or not.
func TestTrialLineSaysBursts(t *testing.T) {
	t.Parallel()
	slo, _ := result.ParseSLO("p99<=10ms")
	one := result.SearchTrial{Rate: 640, Full: true, LatencyUs: 17100, Over: 428, Arrivals: 6312, Dispersion: 12.5, Pool: 1}
	if got := DescribeTrial(one, slo); !strings.Contains(got, "[428 of 6,312 over the limit in bursts (worth 504 independent): too close to call]") {
		t.Errorf("one trial: %q", got)
	}
	pooled := result.SearchTrial{Rate: 640, LatencyUs: 9000, Over: 3, Arrivals: 1000, Dispersion: 0, Pool: 2,
		PooledOver: 431, PooledArrivals: 7312, PooledDispersion: 10, Decided: true}
	if got := DescribeTrial(pooled, slo); !strings.Contains(got, "[431 of 7,312 over the limit in bursts (worth 731 independent), 2 trials pooled]") {
		t.Errorf("pooled: %q", got)
	}
	even := result.SearchTrial{Rate: 40, LatencyUs: 9000, Over: 9, Arrivals: 1000, Pool: 1}
	if got := DescribeTrial(even, slo); strings.Contains(got, "bursts") {
		t.Errorf("no bursts: %q", got)
	}
}

// A trial failed by its pool says so from the pool's figures, and the
// pool's worth in independent arrivals is said once, in the tail's
// bracket; a file written before the figures (the pool's reason in Why)
// still reads as it did.
func TestPooledFailureIsPhrasedOnceFromItsFigures(t *testing.T) {
	t.Parallel()
	slo, _ := result.ParseSLO("p99<=10ms")
	tr := result.SearchTrial{Rate: 640, LatencyUs: 9000, Over: 3, Arrivals: 1000, Pool: 2, Why: "",
		PooledOver: 431, PooledArrivals: 7312, PooledDispersion: 10, Decided: true,
		PoolShare: &result.PooledShare{Share: 0.0589, Low: 0.0512, High: 0.0668, Allowed: 0.01}}
	got := DescribeTrial(tr, slo)
	if !strings.Contains(got, "FAIL: 5.89% of arrivals over 10ms (95%: 5.12–6.68%) against 1%") {
		t.Errorf("pooled failure: %q", got)
	}
	if n := strings.Count(got, "independent"); n != 1 {
		t.Errorf("pooled failure says its worth %d times: %q", n, got)
	}
	tr.PoolShare, tr.Why = nil, "431 of 7312 arrivals over 10ms: 5.89% (95%: 5.12–6.68%) against 1%"
	if got := DescribeTrial(tr, slo); !strings.Contains(got, "FAIL: "+tr.Why) {
		t.Errorf("an older file's pooled reason: %q", got)
	}
}

func TestAnswerLineGivesTheIntervals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    result.CapacitySearch
		want string
	}{
		{result.CapacitySearch{Rate: 1200, Interval: &result.RateInterval{Low: 1100, High: 1300, LowFrom: "tails", HighFrom: "tails"},
			LatencyInterval: &result.QuantileInterval{Quantile: "p99", PointUs: 8100, LowUs: 7200, HighUs: 9400, Arrivals: 4000, Trials: 3}},
			"answer 1,200/s [1,100, 1,300] (95 % by the trials' tails); p99 8.10ms [7.20ms, 9.40ms] from 4,000 arrivals in 3 trials"},
		{result.CapacitySearch{Rate: 1200, Interval: &result.RateInterval{Low: 1200, High: 1260, LowFrom: "bracket", HighFrom: "bracket"}},
			"answer 1,200/s [1,200, 1,260] (the highest rate that passed, the lowest that failed)"},
		{result.CapacitySearch{Rate: 1200, Interval: &result.RateInterval{Low: 1100, High: 1260, LowFrom: "tails", HighFrom: "bracket"}},
			"answer 1,200/s [1,100, 1,260] (low end 95 % by the trials' tails, high end the lowest rate that failed)"},
		{result.CapacitySearch{Rate: 400, Interval: &result.RateInterval{Low: 400, LowFrom: "tails"},
			LatencyInterval: &result.QuantileInterval{Quantile: "p999", PointUs: 500, LowUs: 400, HighUs: 2000, Arrivals: 80, Trials: 1}},
			"answer 400/s [400, none failed above] (95 % by the trials' tails); p99.9 500µs [400µs, 2.00ms] from 80 arrivals in 1 trial"},
		{result.CapacitySearch{Rate: 0}, ""},
	} {
		if got := AnswerLine(c.s); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

// An answer whose repeats disagreed is called unstable, with the range
// the capacity moved within, never "±5 %, confirmed"; an open end says so.
func TestUnstableAnswerSaysSo(t *testing.T) {
	t.Parallel()
	slo, _ := result.ParseSLO("p99<=20ms")
	s := result.CapacitySearch{Impl: "zk-pred", Rate: 484, Missed: 508, Confirmed: true, Unstable: true,
		Note:     "unstable: 2 of 4 full trials at 484/s passed and 3 of 4 at 508/s",
		Spread:   &result.CapacitySpread{Rate: 484, Missed: 508, PassedAt: 2, TrialsAt: 4, PassedMissed: 3, TrialsMissed: 4, Low: 440},
		Interval: &result.RateInterval{Low: 440, LowFrom: capacity.FromSpread, HighFrom: capacity.FromSpread}}
	v := SearchVerdict(s, slo, 0.05)
	if !strings.Contains(v, "unstable") || strings.Contains(v, "confirmed") || !strings.Contains(v, "440/s and above") {
		t.Errorf("verdict %q: want unstable, not confirmed, and the open range from 440/s", v)
	}
	a := AnswerLine(s)
	if !strings.Contains(a, "answer 484/s [440, open: no rate above failed every repeat]") || !strings.Contains(a, "2 of 4 full trials passed at 484/s, 3 of 4 at 508/s") {
		t.Errorf("answer line %q", a)
	}
}
