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
	"github.com/lockbench/lockbench/sandboxtest"
)

// A frozen server stalls a lock that needs it and not one that needs only
// a majority: with its single server stopped, a Redis or ZooKeeper lock
// grants nothing until the server resumes, and then grants again; with
// one of five masters stopped, Redlock keeps granting.
func TestFreezeStallsWhatNeedsTheFrozenServer(t *testing.T) {
	for _, tc := range []struct {
		impl    string
		freeze  time.Duration
		stalled bool
		options map[string]string
	}{
		{impl: "redis", freeze: time.Second, stalled: true},
		{impl: "zk-pred", freeze: time.Second, stalled: true},
		// Each attempt waits out the stopped master's reply bound: a
		// generous one, and a freeze long enough for several, so that a
		// starved test machine's slow replies from the others do not
		// pass for the freeze.
		{impl: "redlock", freeze: 2 * time.Second, options: map[string]string{"redlock-timeout": "150ms"}},
	} {
		t.Run(tc.impl, func(t *testing.T) {
			opts := map[string]string{"freeze-for": tc.freeze.String()}
			for k, v := range tc.options {
				opts[k] = v
			}
			c := run(t, "freeze", tc.impl, 1, impl.Config{TTL: 5 * time.Second, SessionTimeout: 5 * time.Second, Options: opts})
			z := c.Faults.Freeze
			if z.FrozenServers != 1 || z.FrozenMsMax < float64(tc.freeze.Milliseconds()) || z.FreezeForMs != float64(tc.freeze.Milliseconds()) {
				t.Errorf("frozen %v servers for %v ms (asked %v ms); want 1 for at least %v", z.FrozenServers, z.FrozenMsMax, z.FreezeForMs, tc.freeze)
			}
			if z.AcquiresBefore == 0 || z.AcquiresAfter == 0 || z.Unrecovered != 0 {
				t.Errorf("acquisitions before %v, after %v, repeats unrecovered %v: want both, none", z.AcquiresBefore, z.AcquiresAfter, z.Unrecovered)
			}
			if c.Faults.RecoveryMs == nil || c.Faults.RecoveryMs.Count != 1 {
				t.Errorf("no grant after the resume: %+v", c.Faults.RecoveryMs)
			}
			if c.SafetyViolations != 0 {
				t.Errorf("violations %+v", c.Violations)
			}
			// The stall is compared with the freeze in the same run: a
			// lock that needs the stopped server waits out (most of) it,
			// one that needs a majority goes on granting through it.
			stall := z.StallMsMax
			if tc.stalled && stall < float64(tc.freeze.Milliseconds())/2 {
				t.Errorf("longest time without a grant %v ms, want at least half the %v freeze", stall, tc.freeze)
			}
			if !tc.stalled && z.AcquiresFrozen == 0 {
				t.Errorf("with one of five masters stopped: no grant in %v (longest time without one %v ms); want grants going on",
					tc.freeze, stall)
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

// PostgreSQL serves each client from a backend of its own, which leaves
// the postmaster's process group: a freeze must stop those too, or the
// lock goes on granting through it (as it did, 19,540 times in 2 s).
func TestFreezeStopsPostgresBackends(t *testing.T) {
	d, ok := impl.Lookup("pg-advisory")
	if !ok {
		t.Fatal("no driver pg-advisory")
	}
	sc, _ := engine.LookupScenario("freeze")
	const freeze = time.Second
	c, err := engine.RunCell(context.Background(), engine.CellSpec{Impl: d.Name, Scenario: sc, Clients: 2, MaxTime: time.Minute,
		Config: impl.Config{Servers: sandboxtest.Start(t, d.Needs...), Namespace: t.Name(),
			Options: map[string]string{"freeze-for": freeze.String()}}})
	if err != nil {
		t.Fatal(err)
	}
	z := c.Faults.Freeze
	// A grant may land as the stop goes out, backend by backend; a lock
	// that kept granting makes thousands.
	if z == nil || z.AcquiresBefore == 0 || z.AcquiresAfter == 0 || z.AcquiresFrozen > 50 || z.StallMsMax < float64(freeze.Milliseconds())/2 {
		t.Fatalf("freeze of %v: %+v; want a stall", freeze, z)
	}
}
