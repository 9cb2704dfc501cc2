package main

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

func cell(clients int, rounds ...[]result.Cell) result.Cell {
	c := result.Cell{Impl: "redis", Scenario: "hot", Clients: clients, Kind: result.KindClosed}
	c.Rounds = result.RoundsOf(rounds[0])
	return c
}

func rounds(f func(i int) float64) []result.Cell {
	var out []result.Cell
	for i := range 8 {
		v := f(i)
		out = append(out, result.Cell{AcquiresPerS: v, Acquires: 100, AcquireLatencyUs: result.Latency{P50: v, P99: 2 * v, P999: 3 * v}})
	}
	return out
}

// Halves that differ every time are called different by both tests;
// halves drawn alike are not; a cell of fewer than eight rounds is left
// out.
func TestOddAgainstEvenRounds(t *testing.T) {
	dir := t.TempDir()
	same := rounds(func(i int) float64 { return []float64{100, 104, 98, 101, 103, 99, 102, 100}[i] })
	apart := rounds(func(i int) float64 { return 100 + 50*float64(i%2) + float64(i) })
	short := result.Cell{Impl: "redis", Scenario: "hot", Clients: 3, Kind: result.KindClosed, Rounds: result.RoundsOf(same[:4])}
	s := result.Summary{Cells: []result.Cell{cell(1, same), cell(2, apart), short}}
	if err := result.WriteJSON(filepath.Join(dir, result.SummaryFile), s); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := run(dir, &b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"A/A over 2 cells, 6 figures", "rank test (compare): 3 of 6", "paired ratio (verdict): 3 of 6"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := run(t.TempDir(), &b); err == nil {
		t.Error("a directory without results: want an error")
	}
}

// simulate writes cells whose eight rounds are drawn from one lognormal
// (±10 %), each figure independently, the even rounds multiplied by shift,
// and returns aacheck's tally of them.
func simulate(t *testing.T, r *rand.Rand, cells int, shift float64) tally {
	t.Helper()
	draw := func() float64 { return 100 * math.Exp(0.1*r.NormFloat64()) }
	var s result.Summary
	for c := range cells {
		rs := make([]result.Cell, 8)
		for i := range rs {
			k := 1.0
			if i%2 == 1 {
				k = shift
			}
			rs[i] = result.Cell{AcquiresPerS: k * draw(), Acquires: 100,
				AcquireLatencyUs: result.Latency{P50: k * draw(), P99: k * draw(), P999: k * draw()}}
		}
		s.Cells = append(s.Cells, cell(c+1, rs))
	}
	dir := t.TempDir()
	if err := result.WriteJSON(filepath.Join(dir, result.SummaryFile), s); err != nil {
		t.Fatal(err)
	}
	tl, err := run(dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// Many A/A cells drawn from one distribution raise alarms at the tests'
// exact rates — the rank test at 4 against 4 at 2/70 (its only p-value
// below 0.05), the paired ratio's t interval on lognormal rounds at 5 % —
// within four binomial standard deviations; a 2× shift is caught almost
// every time; -assert passes the first and fails the second.
func TestFalseAlarmRate(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(51, 4))
	aa := simulate(t, r, 600, 1)
	for _, c := range []struct {
		name          string
		alarms, tests int
		level         float64
	}{{"rank test", aa.rankAlarms, aa.tested, 2.0 / 70}, {"paired ratio", aa.ratioAlarms, aa.figures, 0.05}} {
		rate := float64(c.alarms) / float64(c.tests)
		sd := math.Sqrt(c.level * (1 - c.level) / float64(c.tests))
		t.Logf("A/A %s: %d of %d false alarms (%.2f %%), exact level %.2f %%", c.name, c.alarms, c.tests, 100*rate, 100*c.level)
		if c.tests != 1800 || math.Abs(rate-c.level) > 4*sd {
			t.Errorf("A/A %s: %d alarms of %d, want 1800 tested at %.4f ± %.4f", c.name, c.alarms, c.tests, c.level, 4*sd)
		}
	}
	if err := aa.excessive(); err != nil {
		t.Errorf("A/A at the nominal rate: %v", err)
	}
	ab := simulate(t, r, 200, 2)
	t.Logf("2× shift: rank test caught %d of %d, paired ratio %d of %d", ab.rankAlarms, ab.tested, ab.ratioAlarms, ab.figures)
	if ab.rankAlarms < ab.tested*99/100 || ab.ratioAlarms < ab.figures*99/100 {
		t.Errorf("2× shift: rank test caught %d of %d, paired ratio %d of %d; want 99 %%", ab.rankAlarms, ab.tested, ab.ratioAlarms, ab.figures)
	}
	if err := (tally{figures: 100, tested: 100, rankAlarms: 15, ratioAlarms: 5}).excessive(); err == nil {
		t.Error("15 % rank alarms of 100: -assert passed it")
	}
}

// The bound is the exact binomial tail: at CI's 6 figures a calibrated
// test's 2 alarms (3.3 % of runs) pass, 4 (under 0.01 %) fail; the tail
// agrees with its closed form and is 1 and 0 at its ends.
func TestExcessiveAtAHandfulOfFigures(t *testing.T) {
	t.Parallel()
	q := 1 - nominal
	want := 1 - math.Pow(q, 6) - 6*nominal*math.Pow(q, 5)
	if got := binomialTail(2, 6, nominal); math.Abs(got-want) > 1e-12 {
		t.Errorf("P(X ≥ 2), n 6: %v, want %v", got, want)
	}
	if got := binomialTail(0, 6, nominal); got != 1 {
		t.Errorf("P(X ≥ 0): %v, want 1", got)
	}
	if got := binomialTail(7, 6, nominal); got != 0 {
		t.Errorf("P(X ≥ 7), n 6: %v, want 0", got)
	}
	for alarms, fail := range map[int]bool{0: false, 2: false, 3: false, 4: true, 6: true} {
		err := (tally{figures: 6, tested: 6, ratioAlarms: alarms}).excessive()
		if (err != nil) != fail {
			t.Errorf("%d paired-ratio alarms of 6: excessive says %v, want failing %v", alarms, err, fail)
		}
	}
	// At the full script's 120 figures the bound sits near three standard
	// deviations of the normal approximation, which failed 14 alarms: the
	// exact tail fails 15.
	if (tally{figures: 120, tested: 120, ratioAlarms: 12}).excessive() != nil {
		t.Error("12 alarms of 120 called excessive")
	}
	if (tally{figures: 120, tested: 120, ratioAlarms: 16}).excessive() == nil {
		t.Error("16 alarms of 120 passed")
	}
}
