package judge

import (
	"math"
	"testing"

	"github.com/lockbench/lockbench/result"
)

// roundsCell is a hot cell of impl whose rounds measured rates and p99s.
func roundsCell(impl string, clients int, rates, p99s []float64) result.Cell {
	var rs []result.Cell
	for i := range rates {
		rs = append(rs, result.Cell{AcquiresPerS: rates[i], Acquires: 100, AcquireLatencyUs: result.Latency{P50: 1, P99: p99s[i], P999: p99s[i]}})
	}
	return result.Cell{Impl: impl, Scenario: "hot", Clients: clients, Acquires: 100 * int64(len(rates)), Rounds: result.RoundsOf(rs)}
}

func TestRoundsCallADifferenceOnlyWhereTheIntervalExcludesOne(t *testing.T) {
	drift := []float64{100, 120, 85, 110, 95, 105}
	faster, same := make([]float64, 6), make([]float64, 6)
	wobble := []float64{1.02, 0.97, 1.01, 0.99, 1.03, 0.98}
	for i, v := range drift {
		faster[i], same[i] = v*1.1, v*wobble[i]
	}
	cells := []result.Cell{
		roundsCell("a", 8, faster, drift), roundsCell("a", 32, same, drift),
		roundsCell("b", 8, drift, drift), roundsCell("b", 32, drift, drift),
	}
	r := Judge(cells, nil).Rounds
	if r == nil || len(r.Ratios) != 4 {
		t.Fatalf("Rounds = %+v, want 4 ratios (acq/s and p99 at 8 and 32 clients)", r)
	}
	got := map[[2]any]Ratio{}
	for _, x := range r.Ratios {
		if x.B.Impl != "a" || x.A.Impl != "b" {
			t.Fatalf("ratio %+v: want b over a, the first row", x)
		}
		got[[2]any{x.A.Clients, x.Figure}] = x
	}
	if x := got[[2]any{8, FigureAcquiresPerS}]; !x.Differs || math.Abs(x.Ratio.Point-1/1.1) > 1e-9 {
		t.Fatalf("a 10 %% difference under ±20 %% drift: %+v, want called", x)
	}
	if x := got[[2]any{32, FigureAcquiresPerS}]; x.Differs || x.CouldTell <= 0 || x.CouldTell > 0.1 {
		t.Fatalf("a ±3 %% wobble: %+v, want no difference, able to tell a few per cent", x)
	}
	if x := got[[2]any{8, FigureP99}]; x.Differs || x.Ratio.Point != 1 {
		t.Fatalf("equal p99: %+v", x)
	}
	if r.Noise.Cells != 4 || r.Noise.Median < 0.1 || r.Noise.Rounds != 6 || r.Noise.Advised <= 6 {
		t.Fatalf("noise %+v: want four cells moving ±10 %% or more, more than six rounds advised for ±5 %%", r.Noise)
	}
}

func TestRoundsAreAbsentWithoutRounds(t *testing.T) {
	if r := Judge([]result.Cell{{Impl: "a", Scenario: "hot", Clients: 1, Acquires: 5}}, nil).Rounds; r != nil {
		t.Fatalf("one round per cell: %+v, want nil", r)
	}
}
