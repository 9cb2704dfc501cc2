package faults_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
)

// A frozen server stalls a lock that needs it and not one that needs only
// a majority: with its single server stopped, a Redis or ZooKeeper lock
// grants nothing until the server resumes, and then grants again; with
// one of five masters stopped, Redlock keeps granting.
func TestFreezeStallsWhatNeedsTheFrozenServer(t *testing.T) {
	const freeze = time.Second
	for _, tc := range []struct {
		impl    string
		stalled bool
	}{{"redis", true}, {"zk-pred", true}, {"redlock", false}} {
		t.Run(tc.impl, func(t *testing.T) {
			c := run(t, "freeze", tc.impl, 1, impl.Config{TTL: 4 * time.Second, SessionTimeout: 4 * time.Second,
				Options: map[string]string{"freeze-for": freeze.String()}})
			d := c.Faults.Details
			if d["frozen_servers"] != 1 || d["frozen_ms_max"] < float64(freeze.Milliseconds()) {
				t.Errorf("frozen %v servers for %v ms; want 1 for at least %v", d["frozen_servers"], d["frozen_ms_max"], freeze)
			}
			if d["acquires_before"] == 0 || d["acquires_after"] == 0 {
				t.Errorf("acquisitions before %v, after %v: want both", d["acquires_before"], d["acquires_after"])
			}
			if c.Faults.RecoveryMs == nil || c.Faults.RecoveryMs.Count != 1 {
				t.Errorf("no grant after the resume: %+v", c.Faults.RecoveryMs)
			}
			if c.SafetyViolations != 0 {
				t.Errorf("violations %+v", c.Violations)
			}
			// The stall is compared with the freeze in the same run: a
			// lock that needs the stopped server waits out (most of) it,
			// one that needs a majority does not wait for it at all.
			stall := d["stall_ms_max"]
			if tc.stalled && stall < float64(freeze.Milliseconds())/2 {
				t.Errorf("longest time without a grant %v ms, want at least half the %v freeze", stall, freeze)
			}
			if !tc.stalled && (stall >= float64(freeze.Milliseconds()) || d["acquires_frozen"] == 0) {
				t.Errorf("with one of five masters stopped: longest time without a grant %v ms, %v grants; want grants going on",
					stall, d["acquires_frozen"])
			}
		})
	}
}

// A server lockbench was only given the address of is not its to stop:
// the cell is skipped, saying why, and nothing is frozen.
func TestFreezeSkipsServersItDidNotStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	d, _ := impl.Lookup("redis")
	sc, _ := engine.LookupScenario("freeze")
	_, err = engine.RunCell(context.Background(), engine.CellSpec{Impl: d.Name, Scenario: sc, Clients: 2, MaxTime: time.Minute,
		Config: impl.Config{Servers: impl.Servers{d.Needs[0].Role: {ln.Addr().String()}}}})
	if !errors.Is(err, engine.ErrNotApplicable) || !strings.Contains(err.Error(), "not started by this lockbench") {
		t.Errorf("freeze on a server it did not start: %v; want not-applicable saying so", err)
	}
}
