package main

import (
	"bytes"
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
	if err := run(dir, &b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"A/A over 2 cells, 6 figures", "rank test (compare): 3 of 6", "paired ratio (verdict): 3 of 6"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if err := run(t.TempDir(), &b); err == nil {
		t.Error("a directory without results: want an error")
	}
}
