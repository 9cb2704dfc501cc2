package judge

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/result"
)

func TestLittleCheck(t *testing.T) {
	t.Parallel()
	// 8 clients, each cycle 1 ms acquire + 0.5 ms release + 2 ms hold +
	// 0.5 ms think = 4 ms: 2,000 acq/s fits Little's law exactly.
	c := result.Cell{Scenario: "hot", Kind: result.KindClosed, Clients: 8, AcquiresPerS: 2000,
		AcquireLatencyUs: result.Latency{Mean: 1000}, ReleaseLatencyUs: result.Latency{Mean: 500}}
	l := LittleCheck(c, 2*time.Millisecond, 500*time.Microsecond)
	if l.Expected < 7.99 || l.Expected > 8.01 || LittleOff(l) {
		t.Errorf("exact cell: %+v", l)
	}
	c.AcquiresPerS = 1500 // a quarter of the time unaccounted for
	l = LittleCheck(c, 2*time.Millisecond, 500*time.Microsecond)
	if l.Off > -0.24 || l.Off < -0.26 || !LittleOff(l) || l.Clients != 8 {
		t.Errorf("lossy cell: %+v", l)
	}
	// Shard 1 of 2 ran 4 of the 8 clients, at half the throughput: exact.
	shard := c
	shard.AcquiresPerS, shard.Shard = 1000, &result.CellShard{Index: 1, Count: 2, First: 4, Clients: 4}
	if l := LittleCheck(shard, 2*time.Millisecond, 500*time.Microsecond); LittleOff(l) || l.Off > 0.01 || l.Off < -0.01 || l.Clients != 4 {
		t.Errorf("a shard's exact share: %+v", l)
	}
	// The in-process lock at one client: 2.96 million cycles a second,
	// latencies rounded up to 1 µs each. Rounding alone puts the law 6×
	// off, so the cell is not checked; at 20 µs a cycle it is.
	fast := result.Cell{Scenario: "hot", Kind: result.KindClosed, Clients: 1, AcquiresPerS: 2.96e6,
		AcquireLatencyUs: result.Latency{Mean: 1}, ReleaseLatencyUs: result.Latency{Mean: 1}}
	if l := LittleCheck(fast, 0, 0); l != (result.Little{}) {
		t.Errorf("a cycle below the latencies' resolution checked: %+v", l)
	}
	fast.AcquiresPerS, fast.AcquireLatencyUs.Mean, fast.ReleaseLatencyUs.Mean = 30000, 10, 10
	if l := LittleCheck(fast, 0, 0); l.Clients != 1 || !LittleOff(l) {
		t.Errorf("a 20 µs cycle 40 %% off: %+v, want checked and off", l)
	}
	c.Kind, c.Scenario = result.KindOpen, "rate"
	if l := LittleCheck(c, 0, 0); l != (result.Little{}) {
		t.Errorf("open loop checked: %+v", l)
	}
}
