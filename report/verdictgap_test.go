package report

import (
	"testing"

	"github.com/lockbench/lockbench/result"
)

func TestGapVerdictNamesEachImplAtItsMostClients(t *testing.T) {
	t.Parallel()
	gap := func(impl string, clients int, p50, p90 float64) Cell {
		return Cell{Impl: impl, Scenario: "hot", Clients: clients, HandoffGapUs: &result.Latency{P50: p50, P90: p90}}
	}
	cells := []Cell{gap("etcd", 8, 2500, 70000), gap("etcd", 32, 3000, 90000), gap("etcd-recipe", 32, 2000, 7500),
		gap("redis", 1, 100, 200), {Impl: "zk-pred", Clients: 8}}
	v, ok := gapVerdict(cells)
	want := "etcd 3.00ms p50, 90.0ms p90 at 32 clients; etcd-recipe 2.00ms p50, 7.50ms p90 at 32 clients — etcd's p90 is 12× etcd-recipe's."
	if !ok || v.Question != "Hand-off gap" || v.Answer != want {
		t.Errorf("gapVerdict = %q (%v),\nwant %q", v.Answer, ok, want)
	}
	if _, ok := gapVerdict([]Cell{gap("redis", 1, 100, 200)}); ok {
		t.Error("a verdict from a single client, which hands nothing on")
	}
}
