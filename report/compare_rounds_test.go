package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

func roundsCell(rates, p99s []float64) Cell {
	var rs []result.Cell
	for i := range rates {
		rs = append(rs, result.Cell{AcquiresPerS: rates[i], Acquires: 100, AcquireLatencyUs: result.Latency{P50: 1000, P99: p99s[i], P999: p99s[i]}})
	}
	return Cell{Impl: "a", Scenario: "hot", Clients: 8, Acquires: 100 * int64(len(rates)), AcquiresPerS: rates[0],
		AcquireLatencyUs: result.Latency{P50: 1000, P99: p99s[0]}, Rounds: result.RoundsOf(rs)}
}

// With rounds on both sides compare tests: a change the rank test cannot
// tell from noise is "~" with its p-value even past the threshold, and
// only a significant one beyond it regresses.
func TestCompareTestsRounds(t *testing.T) {
	old := roundsCell([]float64{1000, 1100, 900, 1050, 950, 1000}, []float64{5000, 5100, 4900, 5000, 5050, 4950})
	same := roundsCell([]float64{950, 1150, 1000, 880, 1080, 990}, []float64{5020, 4980, 5100, 4900, 5000, 5010})
	slower := roundsCell([]float64{500, 550, 450, 520, 480, 500}, []float64{9000, 9100, 8900, 9000, 9050, 8950})
	aa := Compare([]Cell{old}, []Cell{same}, CompareOptions{Noise: 0.01})
	if len(aa.Regressions) != 0 || len(aa.Untested) != 0 {
		t.Fatalf("A/A: regressions %v, untested %v", aa.Regressions, aa.Untested)
	}
	for _, m := range aa.Cells[0].Metrics[:3] {
		if !m.Tested || !strings.HasPrefix(m.Verdict(), "~ (p=") {
			t.Fatalf("A/A %s: %+v %q, want tested and ~", m.Name, m, m.Verdict())
		}
	}
	ab := Compare([]Cell{old}, []Cell{slower}, CompareOptions{})
	if len(ab.Regressions) != 2 {
		t.Fatalf("half the throughput, nearly twice the p99: regressions %v, want acq/s and p99", ab.Regressions)
	}
	if m := ab.Cells[0].Metrics[0]; !m.Tested || m.P >= 0.05 || !strings.HasPrefix(m.Verdict(), "worse (p=") {
		t.Fatalf("acq/s %+v %q", m, m.Verdict())
	}
}

func TestCompareSaysWhenItCannotTest(t *testing.T) {
	one := Cell{Impl: "a", Scenario: "hot", Clients: 8, Acquires: 100, AcquiresPerS: 1000, AcquireLatencyUs: result.Latency{P50: 1000, P99: 5000}}
	c := Compare([]Cell{one}, []Cell{one}, CompareOptions{})
	if len(c.Untested) != 1 || c.Cells[0].Metrics[0].Tested {
		t.Fatalf("one round a side: %+v", c)
	}
	var b bytes.Buffer
	if err := c.Write(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "cannot test 1 of 1 cells (fewer than 4 rounds a side") {
		t.Fatalf("output:\n%s", b.String())
	}
}
