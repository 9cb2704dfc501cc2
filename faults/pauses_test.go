package faults_test

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
)

// The pauses scenario stops the lock's server on its schedule while
// holders write the register in lockbench's memory, and says per repeat
// what share of the acknowledged writes was lost: the shares are the
// cell's lost updates over its writes, and the register was written
// through the stops (it is not on the stopped server).
func TestPausesStopTheServerOnItsScheduleAndCountLostUpdates(t *testing.T) {
	opts := map[string]string{"freeze-for": "600ms", "pause-every": "1s", "pauses-for": "3500ms"}
	c := run(t, "pauses", "redis", 2, impl.Config{TTL: 300 * time.Millisecond, Options: opts})
	z := c.Faults.Pauses
	if z.Pauses != 6 || z.Servers != 1 || z.FreezeForMs != 600 || z.EveryMs != 1000 {
		t.Errorf("%d pauses of %v ms every %v ms on %d servers; want 3 a repeat, 600 every 1000, on 1", z.Pauses, z.FreezeForMs, z.EveryMs, z.Servers)
	}
	s := c.Safety
	if s == nil || !s.Guarded || s.GuardedWrites < 10 || s.GuardNote != "" {
		t.Fatalf("safety %+v: want the register written at least 10 times", s)
	}
	if len(z.LostShareUnfenced) != 2 || len(z.LostShareFenced) != 2 {
		t.Fatalf("shares %v / %v, want one a repeat", z.LostShareUnfenced, z.LostShareFenced)
	}
	for i, sh := range append(z.LostShareUnfenced, z.LostShareFenced...) {
		if sh < 0 || sh > 1 {
			t.Errorf("share %d: %v", i, sh)
		}
	}
	if z.LostShareUnfenced[0]+z.LostShareUnfenced[1] > 0 != (s.LostUpdates > 0) {
		t.Errorf("shares %v, yet %d lost updates in the cell", z.LostShareUnfenced, s.LostUpdates)
	}
}
