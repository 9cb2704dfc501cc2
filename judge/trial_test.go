package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/result"
)

func TestJudgeTrialAndGeneratorLimit(t *testing.T) {
	t.Parallel()
	slo, err := result.ParseSLO("p99<=10ms")
	if err != nil {
		t.Fatal(err)
	}
	ok := result.Cell{Scenario: "rate", Kind: result.KindOpen, Acquires: 1000, AcquireLatencyUs: result.Latency{P99: 4000},
		Open: &result.OpenLoop{Offered: 1000, ScheduleLagUs: result.Latency{P99: 50}}}
	if pass, why := JudgeTrial(ok, slo); !pass || why != "" {
		t.Errorf("good cell failed: %s", why)
	}
	slow := ok
	slow.AcquireLatencyUs.P99 = 25000
	if pass, why := JudgeTrial(slow, slo); pass || !strings.Contains(why, "p99") {
		t.Errorf("slow cell: %v %q", pass, why)
	}
	if GeneratorLimit(slow, slo).Kind != "" {
		t.Error("a slow lock blamed on lockbench")
	}
	dropped := ok
	dropped.Open = &result.OpenLoop{Offered: 1000, Dropped: 3}
	if pass, why := JudgeTrial(dropped, slo); pass || !strings.Contains(why, "3 of 1000 arrivals dropped") {
		t.Errorf("dropping cell: %v %q", pass, why)
	}
	late := slow
	late.Open = &result.OpenLoop{Offered: 1000, ScheduleLagUs: result.Latency{P99: 20000}}
	if g := GeneratorLimit(late, slo); g.Kind != result.LimitLate || g.ScheduleLagP99Us != 20000 {
		t.Errorf("late generator not named: %+v", g)
	}
	queued := slow // a lock that queues arrivals for a second, on a busy machine
	queued.AcquireLatencyUs.P99 = 910000
	queued.Open = &result.OpenLoop{Offered: 1000, ScheduleLagUs: result.Latency{P99: 13000}}
	if g := GeneratorLimit(queued, slo); g.Kind != "" {
		t.Errorf("a queueing lock blamed on lockbench: %+v", g)
	}
	busy := slow
	busy.Generator = &result.Generator{CPUShare: 0.95}
	if g := GeneratorLimit(busy, slo); g.Kind != result.LimitGeneratorCPU || g.GeneratorCPUShare != 0.95 {
		t.Errorf("busy generator not named: %+v", g)
	}
}

func TestTrialLimitNamesABusyMachine(t *testing.T) {
	t.Parallel()
	slo, err := result.ParseSLO("p99<=10ms")
	if err != nil {
		t.Fatal(err)
	}
	c := result.Cell{Scenario: "rate", Kind: result.KindOpen, AcquireLatencyUs: result.Latency{P99: 18000},
		Open:      &result.OpenLoop{ScheduleLagUs: result.Latency{P99: 300}},
		Generator: &result.Generator{Cores: 2, OtherCores: 0.1, WakeLateUs: &result.Latency{P99: 900, Max: 4000}}}
	if l := TrialLimit(c, slo, OtherCoresTolerance); l.Kind != "" {
		t.Errorf("a twentieth of the machine for others: limit %+v, want the lock to blame", l)
	}
	c.Generator.OtherCores = 1.3
	if l := TrialLimit(c, slo, 1); l.Kind != "" {
		t.Errorf("told to judge whatever the machine does: limit %+v", l)
	}
	want := result.TrialLimit{Kind: result.LimitMachineBusy, OtherCores: 1.3, Cores: 2, WakeLateP99Us: 900, WakeLateMaxUs: 4000}
	if l := TrialLimit(c, slo, OtherCoresTolerance); l != want {
		t.Errorf("limit %+v, want %+v: the machine's load and noise", l, want)
	}
	// lockbench's own lateness comes first: it is the nearer cause.
	c.Open.ScheduleLagUs.P99 = 12000
	if l := TrialLimit(c, slo, OtherCoresTolerance); l.Kind != result.LimitLate {
		t.Errorf("limit %+v, want the schedule lag", l)
	}
	// Unknown (-1) or unmeasured (0) is no finding.
	c.Open.ScheduleLagUs.P99, c.Generator.OtherCores = 300, -1
	if l := TrialLimit(c, slo, OtherCoresTolerance); l.Kind != "" {
		t.Errorf("unknown load: limit %+v", l)
	}
}

func TestTailOverAgreesWithTheQuantile(t *testing.T) {
	t.Parallel()
	slo, err := result.ParseSLO("p99<=10ms")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		slow   int64 // of 1,000 values, these take 20 ms, the rest 100 µs
		at     int64 // and these exactly 10 ms (the limit's own bucket reaches past it)
		pass   bool
		over   int64
		within bool // over ≤ 1 % of 1,000
	}{
		{slow: 10, pass: true, over: 10, within: true},
		{slow: 11, pass: false, over: 11},
		{slow: 5, at: 6, pass: false, over: 11},
		{slow: 0, pass: true, over: 0, within: true},
	} {
		h := result.NewHistogram()
		for i := int64(0); i < 1000-tc.slow-tc.at; i++ {
			h.RecordValue(100)
		}
		for i := int64(0); i < tc.slow; i++ {
			h.RecordValue(20000)
		}
		for i := int64(0); i < tc.at; i++ {
			h.RecordValue(10000)
		}
		c := result.Cell{Scenario: "rate", Kind: result.KindOpen, Acquires: 1000, AcquireLatencyUs: result.LatencyOf(h), Open: &result.OpenLoop{Offered: 1000}}
		pass, why := JudgeTrial(c, slo)
		over := result.TailOver(h, slo.Limit)
		if pass != tc.pass || over != tc.over {
			t.Errorf("%d slow, %d at the limit: pass %v (%s), %d over; want %v, %d", tc.slow, tc.at, pass, why, over, tc.pass, tc.over)
		}
		if within := float64(over)/1000 <= slo.TailShare(); within != tc.within || within != pass {
			t.Errorf("%d slow, %d at the limit: share within %v, p99 pass %v; want both %v", tc.slow, tc.at, within, pass, tc.within)
		}
		// Besides its tail, nothing failed it.
		if b := JudgeTrialBesidesTail(c, slo); b != "" {
			t.Errorf("%d slow: besides the tail %q", tc.slow, b)
		}
	}
	if result.TailOver(nil, time.Millisecond) != 0 {
		t.Error("no histogram, yet some over")
	}
	shares := map[string]float64{"p99<=1ms": 0.01, "p999<=1ms": 0.001, "p50<=1ms": 0.5, "max<=1ms": 0, "mean<=1ms": 0}
	for text, want := range shares {
		s, err := result.ParseSLO(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.TailShare(); got != want {
			t.Errorf("%s: tail share %g, want %g", text, got, want)
		}
	}
}

func TestJudgeTrialBesidesTailNamesWhatElseFailed(t *testing.T) {
	t.Parallel()
	slo, err := result.ParseSLO("p99<=10ms,errors<=0.1%")
	if err != nil {
		t.Fatal(err)
	}
	c := result.Cell{Scenario: "rate", Kind: result.KindOpen, Acquires: 1000, Errors: 30, AcquireLatencyUs: result.Latency{P99: 25000},
		Open: &result.OpenLoop{Offered: 1030, Dropped: 2}}
	b := JudgeTrialBesidesTail(c, slo)
	if strings.Contains(b, "p99") || !strings.Contains(b, "errors") || !strings.Contains(b, "2 of 1030 arrivals dropped") {
		t.Errorf("besides the tail: %q; want errors and drops, not the p99", b)
	}
	if _, why := JudgeTrial(c, slo); !strings.Contains(why, "p99") {
		t.Errorf("the whole verdict %q lost the p99", why)
	}
	none := result.Cell{Scenario: "rate", Kind: result.KindOpen}
	if b := JudgeTrialBesidesTail(none, slo); !strings.Contains(b, "no acquisitions") {
		t.Errorf("an empty trial besides its tail: %q", b)
	}
}
