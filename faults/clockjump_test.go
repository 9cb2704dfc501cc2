package faults_test

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
)

// Which clock a lease follows: with the wall clock of its server moved
// forward past the TTL, a single Redis gives the lock to a second client
// at once, Redlock once a majority of its masters' clocks jumped (three of
// five, Kleppmann's objection), and ZooKeeper, whose sessions run on the
// JVM's monotonic clock, to nobody.
func TestClockJumpShowsWhichClockALeaseFollows(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no C compiler to build the clock shim with: scripts/install-servers installs gcc")
		}
		t.Skip("no C compiler to build the clock shim with (apt-get install -y gcc)")
	}
	for _, tc := range []struct {
		impl  string
		jumps []int64 // servers jumped at each grant; nil: never granted
	}{
		{"redis", []int64{1, 1}},
		{"redlock", []int64{3, 3}},
		{"zk-pred", nil},
	} {
		t.Run(tc.impl, func(t *testing.T) {
			c := run(t, "clockjump", tc.impl, 2, impl.Config{TTL: 2 * time.Second, SessionTimeout: 2 * time.Second})
			z := c.Faults.ClockJump
			if z.Granted != int64(len(tc.jumps)) || !slices.Equal(z.JumpsToGrant, tc.jumps) || z.JumpMs != 4000 || !c.Faults.OwnServers {
				t.Errorf("granted %d after %v jumps of %v ms; want %v", z.Granted, z.JumpsToGrant, z.JumpMs, tc.jumps)
			}
			if unsafe := c.SafetyViolations > 0; unsafe != (tc.jumps != nil) {
				t.Errorf("%d violations; want some %v", c.SafetyViolations, tc.jumps != nil)
			}
		})
	}
	if _, ok := engine.LookupScenario("clockjump"); !ok {
		t.Fatal("no clockjump scenario")
	}
}
