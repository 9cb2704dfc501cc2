// Command aacheck measures how often lockbench calls a difference where
// there is none. Given the results of a run whose every cell was measured
// in an even number of rounds (--repeat 2R), it splits each cell's rounds
// into two interleaved halves — rounds 1, 3, 5 … against 2, 4, 6 …, the
// same lock on the same machine, side by side in time — and asks of each
// timed figure what lockbench asks of two rows: the rank test compare
// uses (internal/ranktest) and the paired ratio the verdict uses
// (result.RatioOf, a difference when its interval excludes 1). Each
// answer that says "different" is a false alarm.
//
//	lockbench run --impl redis --clients 1,2,…,20 --repeat 8 --out DIR
//	go run ./cmd/aacheck [-assert] DIR
//
// With -assert it exits 1 when either test's false-alarm rate is far
// above its nominal level (see tally.excessive).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/lockbench/lockbench/internal/ranktest"
	"github.com/lockbench/lockbench/result"
)

func main() {
	args := os.Args[1:]
	assert := len(args) == 2 && args[0] == "-assert"
	if assert {
		args = args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: aacheck [-assert] RESULTS_DIR")
		os.Exit(2)
	}
	t, err := run(args[0], os.Stdout)
	if err == nil && assert {
		err = t.excessive()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "aacheck:", err)
		os.Exit(1)
	}
}

// tally counts the figures asked and the false alarms of each test.
type tally struct {
	cells, figures, tested, rankAlarms, ratioAlarms int
}

// nominal is the highest false-alarm rate either test is built for: the
// rank test calls a difference at p < 1 − Confidence (at 4 rounds a side
// it is discrete and its exact rate 2/70), the paired ratio's interval is
// at Confidence.
const nominal = 1 - ranktest.Confidence

// implausible is how rarely a test at the nominal rate may raise as many
// alarms as a run saw, or more, before -assert calls its rate excessive:
// once in a thousand runs. CI runs the script at 6 figures, where three
// standard deviations of the normal approximation (31.7 %) let 2 alarms
// through in 3.3 % of runs of a perfectly calibrated test.
const implausible = 0.001

// excessive says whether a test's false-alarm rate is far above nominal:
// as many alarms or more, for as many figures as were tested, would come
// less often than implausible from a test at the nominal rate (the exact
// binomial tail, which the normal approximation misstates at a handful
// of figures). Figures of one cell are not independent, so this bound is
// for alarms, not a proof of calibration.
func (t tally) excessive() error {
	for _, c := range []struct {
		name          string
		alarms, tests int
	}{{"rank test", t.rankAlarms, t.tested}, {"paired ratio", t.ratioAlarms, t.figures}} {
		if c.tests == 0 {
			continue
		}
		if p := binomialTail(c.alarms, c.tests, nominal); p < implausible {
			return fmt.Errorf("%s: false-alarm rate %.1f %% of %d, far above its nominal %.0f %% (%d alarms or more come from a test at %.0f %% with p = %.2g)",
				c.name, 100*float64(c.alarms)/float64(c.tests), c.tests, 100*nominal, c.alarms, 100*nominal, p)
		}
	}
	return nil
}

// binomialTail is P(X ≥ k) for X ~ Binomial(n, p).
func binomialTail(k, n int, p float64) float64 {
	return distuv.Binomial{N: float64(n), P: p}.Survival(float64(k - 1))
}

func run(dir string, w io.Writer) (tally, error) {
	s, err := result.ReadSummary(filepath.Join(dir, result.SummaryFile))
	if err != nil {
		return tally{}, err
	}
	var t tally
	for _, c := range s.Cells {
		if c.Rounds == nil || c.Rounds.N < 2*ranktest.MinRounds {
			continue
		}
		t.cells++
		r := c.Rounds
		for _, e := range []result.Estimate{r.AcquiresPerS, r.P50, r.P99} {
			t.add(e.Rounds)
		}
	}
	if t.cells == 0 {
		return t, errors.New("no cell has 8 rounds or more: run with --repeat 8")
	}
	_, err = fmt.Fprintf(w, "A/A over %d cells, %d figures (acq/s, p50, p99), each cell's rounds split odd against even:\n"+
		"  rank test (compare): %d of %d called different at p < %.2f (%.1f %%)\n"+
		"  paired ratio (verdict): %d of %d intervals excluded 1 (%.1f %%)\n",
		t.cells, t.figures, t.rankAlarms, t.tested, 1-ranktest.Confidence, pct(t.rankAlarms, t.tested),
		t.ratioAlarms, t.figures, pct(t.ratioAlarms, t.figures))
	return t, err
}

// add splits one figure's rounds into interleaved halves and tests them.
func (t *tally) add(rounds []float64) {
	n := len(rounds) / 2 * 2
	var a, b []float64
	for i := 0; i < n; i += 2 {
		a, b = append(a, rounds[i]), append(b, rounds[i+1])
	}
	t.figures++
	if c := ranktest.Test(a, b); c.Tested {
		t.tested++
		if c.Significant {
			t.rankAlarms++
		}
	}
	if r := result.RatioOf(a, b); r.HasInterval() && r.Excludes(1) {
		t.ratioAlarms++
	}
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}
