package judge

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/result"
)

func TestTrialAndGeneratorLimit(t *testing.T) {
	t.Parallel()
	slo, err := result.ParseSLO("p99<=10ms")
	if err != nil {
		t.Fatal(err)
	}
	ok := result.Cell{Scenario: "rate", Kind: result.KindOpen, Acquires: 1000, AcquireLatencyUs: result.Latency{P99: 4000},
		Open: &result.OpenLoop{Offered: 1000, ScheduleLagUs: result.Latency{P99: 50}}}
	if v := Trial(ok, slo); !v.Pass() {
		t.Errorf("good cell failed: %+v", v)
	}
	slow := ok
	slow.AcquireLatencyUs.P99 = 25000
	if v := Trial(slow, slo); v.Pass() || !v.has(MissThreshold) || v.Misses[0].Breach.Threshold != "p99<=10ms" || v.Misses[0].Breach.Value != 25000 {
		t.Errorf("slow cell: %+v", v)
	}
	if GeneratorLimit(slow, slo).Kind != "" {
		t.Error("a slow lock blamed on lockbench")
	}
	dropped := ok
	dropped.Open = &result.OpenLoop{Offered: 1000, Dropped: 3}
	if v := Trial(dropped, slo); v.Pass() || len(v.Misses) != 1 || v.Misses[0] != (Miss{Kind: MissDropped, N: 3, Of: 1000}) {
		t.Errorf("dropping cell: %+v", v)
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
		v := Trial(c, slo)
		pass := v.Pass()
		over := result.TailOver(h, slo.Limit)
		if pass != tc.pass || over != tc.over {
			t.Errorf("%d slow, %d at the limit: pass %v (%+v), %d over; want %v, %d", tc.slow, tc.at, pass, v, over, tc.pass, tc.over)
		}
		if within := float64(over)/1000 <= slo.TailShare(); within != tc.within || within != pass {
			t.Errorf("%d slow, %d at the limit: share within %v, p99 pass %v; want both %v", tc.slow, tc.at, within, pass, tc.within)
		}
		// Besides its tail, nothing failed it.
		if b := TrialBesidesTail(c, slo); !b.Pass() {
			t.Errorf("%d slow: besides the tail %+v", tc.slow, b)
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

func TestTrialBesidesTailNamesWhatElseFailed(t *testing.T) {
	t.Parallel()
	slo, err := result.ParseSLO("p99<=10ms,errors<=0.1%")
	if err != nil {
		t.Fatal(err)
	}
	c := result.Cell{Scenario: "rate", Kind: result.KindOpen, Acquires: 1000, Errors: 30, AcquireLatencyUs: result.Latency{P99: 25000},
		Open: &result.OpenLoop{Offered: 1030, Dropped: 2}}
	b := TrialBesidesTail(c, slo)
	var thresholds []string
	for _, m := range b.Misses {
		if m.Kind == MissThreshold {
			thresholds = append(thresholds, m.Breach.Threshold)
		}
	}
	if len(thresholds) != 1 || thresholds[0] != "errors<=0.1%" || !b.has(MissDropped) || !b.has(MissErrors) {
		t.Errorf("besides the tail: %+v; want errors and drops, not the p99", b)
	}
	if v := Trial(c, slo); len(v.Misses) != len(b.Misses)+1 || v.Misses[0].Breach.Threshold != "p99<=10ms" {
		t.Errorf("the whole verdict %+v lost the p99", v)
	}
	none := result.Cell{Scenario: "rate", Kind: result.KindOpen}
	if b := TrialBesidesTail(none, slo); !b.has(MissNoAcquisitions) {
		t.Errorf("an empty trial besides its tail: %+v", b)
	}
}

// has says a miss of kind k failed the trial.
func (v TrialVerdict) has(k MissKind) bool {
	for _, m := range v.Misses {
		if m.Kind == k {
			return true
		}
	}
	return false
}
