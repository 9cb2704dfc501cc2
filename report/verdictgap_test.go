package report

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
)

func TestGapLineNamesEachImplAtItsMostClients(t *testing.T) {
	t.Parallel()
	gap := func(impl string, clients int, p50, p90 float64) Cell {
		return Cell{Impl: impl, Scenario: "hot", Clients: clients, HandoffGapUs: &result.Latency{P50: p50, P90: p90}}
	}
	f := judge.Judge([]Cell{gap("etcd", 8, 2500, 70000), gap("etcd", 32, 3000, 90000), gap("etcd-recipe", 32, 2000, 7500),
		gap("redis", 1, 100, 200), {Impl: "zk-pred", Clients: 8}}, nil)
	if f.Gap == nil {
		t.Fatal("no gap finding")
	}
	v := gapLine(*f.Gap)
	want := "a holder's release call to the next grant, at each lock's most contended loop — etcd's p90 is 12× etcd-recipe's."
	if v.Question != "Hand-off gap" || v.Answer != want {
		t.Errorf("gapLine = %q,\nwant %q", v.Answer, want)
	}
	if got, want := tableText(v.Table), "etcd | 32 | 3.00ms | 90.0ms"; !strings.Contains(got, want) {
		t.Errorf("table %q lacks %q", got, want)
	}
}
