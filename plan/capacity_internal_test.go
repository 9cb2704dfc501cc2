package plan

import (
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
	ts := []result.SearchTrial{{Rate: 125, Pass: false, Why: "far over"},
		{Rate: 62.5, Pass: true}, {Rate: 62.5, Pass: true}, {Rate: 62.5, Pass: false, PoolShare: &result.PooledShare{Share: 0.0108, Low: 0.0102, High: 0.0114, Allowed: 0.01}},
		{Rate: 31, Pass: true}}
	steps := []capacity.Step{{Rate: 125, Pool: 1}, {Rate: 62.5, Pool: 1}, {Rate: 62.5, Pool: 2}, {Rate: 62.5, Pool: 3},
		{Rate: 31, Pool: 1}}
	steps[4].Pass = true
	poolVerdicts(ts, steps)
	for i, want := range []bool{false, false, false, false, true} {
		if ts[i].Pass != want {
			t.Errorf("trial %d at %g: pass %v, want %v", i, ts[i].Rate, ts[i].Pass, want)
		}
	}
	if ts[1].PoolShare != ts[3].PoolShare || ts[0].PoolShare != nil || ts[0].Why != "far over" {
		t.Errorf("shares %v, %v, why %q: want the pool's on its trials, the others' own", ts[0].PoolShare, ts[1].PoolShare, ts[0].Why)
	}
}
