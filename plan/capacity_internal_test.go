package plan

import (
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench/capacity"
	"github.com/lockbench/lockbench/result"
)

func TestTrialsHoldEnoughArrivalsForTheQuantile(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		slo  string
		rate float64
		want time.Duration
	}{
		{"p99<=10ms", 100, 10 * time.Second}, // 1,000 arrivals: ten above the p99
		{"p99<=10ms", 2000, 500 * time.Millisecond},
		{"p90<=10ms", 100, time.Second},
		{"p999<=10ms", 100, maxTailLength}, // 100 s, bounded
		{"max<=10ms", 100, 10 * time.Second},
	} {
		slo, err := result.ParseSLO(c.slo)
		if err != nil {
			t.Fatal(err)
		}
		if got := tailLength(c.rate, slo); got < c.want-time.Millisecond || got > c.want+time.Millisecond {
			t.Errorf("%s at %g/s: %v, want %v", c.slo, c.rate, got, c.want)
		}
	}
}

func TestPoolVerdictsGoToEveryTrialOfAPool(t *testing.T) {
	t.Parallel()
	slo, _ := result.ParseSLO("p99<=10ms")
	c := &Capacity{slo: slo}
	ts := []result.SearchTrial{{Rate: 125, Pass: false, Why: "far over"},
		{Rate: 62.5, Pass: true}, {Rate: 62.5, Pass: false, Limit: "machine busy: 1.5 cores"},
		{Rate: 62.5, Pass: true}, {Rate: 62.5, Pass: false, Unknown: "machine busy: 1.4 cores"},
		{Rate: 62.5, Pass: false, PoolShare: &result.PooledShare{Share: 0.0108, Low: 0.0102, High: 0.0114, Allowed: 0.01}},
		{Rate: 31, Pass: true}}
	pool := capacity.Tail{Over: 27, Arrivals: 2500}
	counted := capacity.Step{Rate: 62.5, PoolSize: 3, Verdict: pool}
	steps := []capacity.Step{{Rate: 125, Pool: 1, PoolSize: 1}, counted, {Rate: 62.5}, counted,
		{Rate: 62.5, Unknown: true, Pool: 3}, counted, {Rate: 31, Pool: 1, PoolSize: 1}}
	steps[6].Pass = true
	c.poolVerdicts(ts, steps)
	for i, want := range []bool{false, false, false, false, false, false, true} {
		if ts[i].Pass != want {
			t.Errorf("trial %d at %g: pass %v, want %v", i, ts[i].Rate, ts[i].Pass, want)
		}
	}
	for i, want := range []int{0, 3, 0, 3, 0, 3, 0} {
		if ts[i].PoolTrials != want {
			t.Errorf("trial %d at %g: %d trials pooled, want %d", i, ts[i].Rate, ts[i].PoolTrials, want)
		}
	}
	if p := ts[1].PoolShare; p == nil || p.Share != pool.Share() || *p != *ts[3].PoolShare || ts[2].PoolShare != nil || ts[4].PoolShare != nil {
		t.Errorf("shares %v, %v, %v: want the pool's on the trials it counted only", ts[1].PoolShare, ts[2].PoolShare, ts[4].PoolShare)
	}
	if ts[0].PoolShare != nil || ts[0].Why != "far over" || ts[6].PoolShare != nil {
		t.Errorf("share %v, why %q: want a trial alone to keep its own verdict", ts[0].PoolShare, ts[0].Why)
	}
}

// The latency at the answer comes from the trials its verdict rests on:
// the last passing pool at the answer's rate, less the trials the
// machine limited or left unknown, and not an earlier pool at that rate.
func TestAnswerPoolIsTheTrialsTheVerdictRestsOn(t *testing.T) {
	t.Parallel()
	pass := func(st capacity.Step) capacity.Step { st.Pass = true; return st }
	steps := []capacity.Step{
		pass(capacity.Step{Rate: 100, Pool: 1, PoolSize: 2}), pass(capacity.Step{Rate: 100, Pool: 2, PoolSize: 2}), // bisect's pool
		{Rate: 100, Unknown: true},                                    // confirm: a busy machine's
		pass(capacity.Step{Rate: 100, Pool: 1, PoolSize: 2}),          // counted
		{Rate: 100, Outcome: capacity.Outcome{Limit: "schedule lag"}}, // retried
		pass(capacity.Step{Rate: 100, Pool: 2, PoolSize: 2}),          // counted
		{Rate: 105, Pool: 1, PoolSize: 1},                             // the failure above
	}
	if got := answerPool(steps, 100); !slices.Equal(got, []int{3, 5}) {
		t.Errorf("pool %v, want the confirmation's two counted trials [3 5]", got)
	}
	alone := []capacity.Step{pass(capacity.Step{Rate: 50}), {Rate: 100}}
	if got := answerPool(alone, 50); !slices.Equal(got, []int{0}) {
		t.Errorf("pool %v, want the one trial judged alone", got)
	}
	if got := answerPool(alone, 100); got != nil {
		t.Errorf("pool %v at a rate that never passed", got)
	}
}
