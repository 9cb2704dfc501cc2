package result

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLittleCheck(t *testing.T) {
	t.Parallel()
	// 8 clients, each cycle 1 ms acquire + 0.5 ms release + 2 ms hold +
	// 0.5 ms think = 4 ms: 2,000 acq/s fits Little's law exactly.
	c := Cell{Scenario: "hot", Kind: KindClosed, Clients: 8, AcquiresPerS: 2000,
		AcquireLatencyUs: Latency{Mean: 1000}, ReleaseLatencyUs: Latency{Mean: 500}}
	l := LittleCheck(c, 2*time.Millisecond, 500*time.Microsecond)
	if l.Expected < 7.99 || l.Expected > 8.01 || l.Note != "" {
		t.Errorf("exact cell: %+v", l)
	}
	c.AcquiresPerS = 1500 // a quarter of the time unaccounted for
	l = LittleCheck(c, 2*time.Millisecond, 500*time.Microsecond)
	if l.Off > -0.24 || l.Off < -0.26 || !strings.Contains(l.Note, "Little's law") {
		t.Errorf("lossy cell: %+v", l)
	}
	// Shard 1 of 2 ran 4 of the 8 clients, at half the throughput: exact.
	shard := c
	shard.AcquiresPerS, shard.Shard = 1000, &CellShard{Index: 1, Count: 2, First: 4, Clients: 4}
	if l := LittleCheck(shard, 2*time.Millisecond, 500*time.Microsecond); l.Note != "" || l.Off > 0.01 || l.Off < -0.01 {
		t.Errorf("a shard's exact share: %+v", l)
	}
	c.Kind, c.Scenario = KindOpen, "rate"
	if l := LittleCheck(c, 0, 0); l != (Little{}) {
		t.Errorf("open loop checked: %+v", l)
	}
}

func TestJudgeTrialAndGeneratorLimit(t *testing.T) {
	t.Parallel()
	slo, err := ParseSLO("p99<=10ms")
	if err != nil {
		t.Fatal(err)
	}
	ok := Cell{Scenario: "rate", Kind: KindOpen, Acquires: 1000, AcquireLatencyUs: Latency{P99: 4000},
		Open: &OpenLoop{Offered: 1000, ScheduleLagUs: Latency{P99: 50}}}
	if pass, why := JudgeTrial(ok, slo); !pass || why != "" {
		t.Errorf("good cell failed: %s", why)
	}
	slow := ok
	slow.AcquireLatencyUs.P99 = 25000
	if pass, why := JudgeTrial(slow, slo); pass || !strings.Contains(why, "p99") {
		t.Errorf("slow cell: %v %q", pass, why)
	}
	if GeneratorLimit(slow, slo) != "" {
		t.Error("a slow lock blamed on lockbench")
	}
	dropped := ok
	dropped.Open = &OpenLoop{Offered: 1000, Dropped: 3}
	if pass, why := JudgeTrial(dropped, slo); pass || !strings.Contains(why, "3 of 1000 arrivals dropped") {
		t.Errorf("dropping cell: %v %q", pass, why)
	}
	late := slow
	late.Open = &OpenLoop{Offered: 1000, ScheduleLagUs: Latency{P99: 20000}}
	if g := GeneratorLimit(late, slo); !strings.Contains(g, "schedule lag") {
		t.Errorf("late generator not named: %q", g)
	}
	queued := slow // a lock that queues arrivals for a second, on a busy machine
	queued.AcquireLatencyUs.P99 = 910000
	queued.Open = &OpenLoop{Offered: 1000, ScheduleLagUs: Latency{P99: 13000}}
	if g := GeneratorLimit(queued, slo); g != "" {
		t.Errorf("a queueing lock blamed on lockbench: %q", g)
	}
	busy := slow
	busy.Generator = &Generator{CPUShare: 0.95}
	if g := GeneratorLimit(busy, slo); !strings.Contains(g, "CPU") {
		t.Errorf("busy generator not named: %q", g)
	}
}

func TestReadCapacity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if IsCapacityDir(dir) {
		t.Error("an empty directory taken for a capacity search")
	}
	want := CapacityReport{Schema: SchemaVersion, SLO: "p99<=2ms", Precision: 0.1,
		Searches: []CapacitySearch{{Impl: "redis", Rate: 812.5, Trials: []SearchTrial{{Rate: 812.5, Pass: true}}}}}
	if err := WriteJSON(filepath.Join(dir, CapacityFile), want); err != nil {
		t.Fatal(err)
	}
	if !IsCapacityDir(dir) {
		t.Error("a directory with capacity.json not taken for a capacity search")
	}
	got, err := ReadCapacity(dir)
	if err != nil || got.SLO != want.SLO || got.Precision != want.Precision || len(got.Searches) != 1 || got.Searches[0].Rate != 812.5 {
		t.Fatalf("read back %+v, %v; want %+v", got, err, want)
	}
	// A run's directory that also holds a capacity.json is a run's.
	if err := WriteJSON(filepath.Join(dir, SummaryFile), Summary{}); err != nil {
		t.Fatal(err)
	}
	if IsCapacityDir(dir) {
		t.Error("a run's directory taken for a capacity search")
	}
	want.Schema = SchemaVersion + 1
	if err := WriteJSON(filepath.Join(dir, CapacityFile), want); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCapacity(dir); !errors.Is(err, ErrSchema) {
		t.Errorf("a newer schema: %v, want ErrSchema", err)
	}
	if _, err := ReadCapacity(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no capacity.json: %v, want os.ErrNotExist", err)
	}
}

func TestTrialLimitNamesABusyMachine(t *testing.T) {
	t.Parallel()
	slo, err := ParseSLO("p99<=10ms")
	if err != nil {
		t.Fatal(err)
	}
	c := Cell{Scenario: "rate", Kind: KindOpen, AcquireLatencyUs: Latency{P99: 18000},
		Open:      &OpenLoop{ScheduleLagUs: Latency{P99: 300}},
		Generator: &Generator{Cores: 2, OtherCores: 0.1, WakeLateUs: &Latency{P99: 900, Max: 4000}}}
	if l := TrialLimit(c, slo, OtherCoresTolerance); l != "" {
		t.Errorf("a twentieth of the machine for others: limit %q, want the lock to blame", l)
	}
	c.Generator.OtherCores = 1.3
	if l := TrialLimit(c, slo, 1); l != "" {
		t.Errorf("told to judge whatever the machine does: limit %q", l)
	}
	l := TrialLimit(c, slo, OtherCoresTolerance)
	if !strings.HasPrefix(l, "machine busy: other processes kept 1.3 of the 2 cores busy") || !strings.Contains(l, "900µs late (p99; max 4.00ms)") {
		t.Errorf("limit %q does not name the machine's load and noise", l)
	}
	// lockbench's own lateness comes first: it is the nearer cause.
	c.Open.ScheduleLagUs.P99 = 12000
	if l := TrialLimit(c, slo, OtherCoresTolerance); !strings.Contains(l, "schedule lag") {
		t.Errorf("limit %q, want the schedule lag", l)
	}
	// Unknown (-1) or unmeasured (0) is no finding.
	c.Open.ScheduleLagUs.P99, c.Generator.OtherCores = 300, -1
	if l := TrialLimit(c, slo, OtherCoresTolerance); l != "" {
		t.Errorf("unknown load: limit %q", l)
	}
}

func TestTailOverAgreesWithTheQuantile(t *testing.T) {
	t.Parallel()
	slo, err := ParseSLO("p99<=10ms")
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
		h := NewHistogram()
		for i := int64(0); i < 1000-tc.slow-tc.at; i++ {
			h.RecordValue(100)
		}
		for i := int64(0); i < tc.slow; i++ {
			h.RecordValue(20000)
		}
		for i := int64(0); i < tc.at; i++ {
			h.RecordValue(10000)
		}
		c := Cell{Scenario: "rate", Kind: KindOpen, Acquires: 1000, AcquireLatencyUs: LatencyOf(h), Open: &OpenLoop{Offered: 1000}}
		pass, why := JudgeTrial(c, slo)
		over := TailOver(h, slo.Limit)
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
	if TailOver(nil, time.Millisecond) != 0 {
		t.Error("no histogram, yet some over")
	}
	shares := map[string]float64{"p99<=1ms": 0.01, "p999<=1ms": 0.001, "p50<=1ms": 0.5, "max<=1ms": 0, "mean<=1ms": 0}
	for text, want := range shares {
		s, err := ParseSLO(text)
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
	slo, err := ParseSLO("p99<=10ms,errors<=0.1%")
	if err != nil {
		t.Fatal(err)
	}
	c := Cell{Scenario: "rate", Kind: KindOpen, Acquires: 1000, Errors: 30, AcquireLatencyUs: Latency{P99: 25000},
		Open: &OpenLoop{Offered: 1030, Dropped: 2}}
	b := JudgeTrialBesidesTail(c, slo)
	if strings.Contains(b, "p99") || !strings.Contains(b, "errors") || !strings.Contains(b, "2 of 1030 arrivals dropped") {
		t.Errorf("besides the tail: %q; want errors and drops, not the p99", b)
	}
	if _, why := JudgeTrial(c, slo); !strings.Contains(why, "p99") {
		t.Errorf("the whole verdict %q lost the p99", why)
	}
	none := Cell{Scenario: "rate", Kind: KindOpen}
	if b := JudgeTrialBesidesTail(none, slo); !strings.Contains(b, "no acquisitions") {
		t.Errorf("an empty trial besides its tail: %q", b)
	}
}
