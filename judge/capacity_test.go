package judge

import (
	"testing"

	"github.com/lockbench/lockbench/result"
)

// Capacity counts a client count only where every threshold was met by
// a cell that can stand for its load: errors above the SLO's share, a
// livelock and an unsafe cell (by CellSafety, a history that is not
// linearizable too) each miss it.
func TestCapacityLeavesOutWhatCannotStand(t *testing.T) {
	t.Parallel()
	slo, err := result.ParseSLO("p99<=5ms,errors<=0.1%,acq/s>=100")
	if err != nil {
		t.Fatal(err)
	}
	cell := func(clients int) result.Cell {
		return result.Cell{Impl: "a", Scenario: "hot", Clients: clients, Acquires: 1000, AcquiresPerS: 500,
			AcquireLatencyUs: result.Latency{P99: 4000}}
	}
	errs, livelock, unlinear, ok := cell(4), cell(8), cell(16), cell(1)
	errs.Errors = 2
	livelock.Finding = result.FindingLivelock
	unlinear.Safety = &result.Safety{Linearizable: result.NotLinearizable}
	for _, tc := range []struct {
		name        string
		bad         result.Cell
		firstMissed int
	}{{"errors", errs, 4}, {"livelock", livelock, 8}, {"not linearizable", unlinear, 16}} {
		rows := Capacity([]result.Cell{ok, tc.bad}, slo)
		if len(rows) != 1 || !rows[0].Met || rows[0].Clients != 1 || rows[0].FirstMissed != tc.firstMissed {
			t.Errorf("%s: Capacity = %+v, want 1 client met, %d first missed", tc.name, rows, tc.firstMissed)
		}
	}
	// 0.2% of attempts failed misses the SLO's threshold, not health.
	if Healthy(livelock) || !Healthy(errs) || !Healthy(ok) {
		t.Error("Healthy: a livelocked cell is healthy, or one failing 0.2% of acquisitions or a clean one is not")
	}
	// 1% of attempts failed is within MaxErrorShare; one more is not.
	edge := ok
	edge.Acquires, edge.Errors = 990, 10
	if !Healthy(edge) {
		t.Error("10 errors in 1000 attempts judged unhealthy")
	}
	edge.Errors = 11
	if Healthy(edge) {
		t.Error("11 errors in 1001 attempts judged healthy")
	}
}
