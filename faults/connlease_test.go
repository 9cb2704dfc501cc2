package faults_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/sandboxtest"
)

// connLocks are the locks whose grant is the holder's connection
// (impl.LeaseConn) that these tests stage faults on, one per server kind.
var connLocks = []string{"pg-advisory", "mysql-getlock"}

// dbServers starts the servers the connection locks need, once per test.
func dbServers(t *testing.T) impl.Servers {
	t.Helper()
	var needs []impl.Need
	for _, name := range connLocks {
		d, ok := impl.Lookup(name)
		if !ok {
			t.Fatalf("no driver %s", name)
		}
		if !d.Caps.Has(impl.LeaseConn) {
			t.Fatalf("%s does not declare LeaseConn", name)
		}
		needs = append(needs, d.Needs...)
	}
	return sandboxtest.Start(t, needs...)
}

// runOn runs one fault cell with clients on servers, as `lockbench run`
// does, and checks it carries its fault report.
func runOn(t *testing.T, servers impl.Servers, scenario, implName string, clients, repeat int, opts map[string]string) result.Cell {
	t.Helper()
	sc, ok := engine.LookupScenario(scenario)
	if !ok {
		t.Fatalf("no scenario %s", scenario)
	}
	nsSeq++
	cfg := impl.Config{Servers: servers, Options: opts, Namespace: fmt.Sprintf("%s-%d-%d", t.Name(), os.Getpid(), nsSeq)}
	c, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: implName, Scenario: sc, Clients: clients, Repeat: repeat, ServerKinds: sandbox.Meter{}, Config: cfg, MaxTime: 2 * time.Minute,
	})
	if err != nil {
		t.Fatalf("%s %s: %v", scenario, implName, err)
	}
	t.Logf("%s %s: %s", scenario, implName, c.Verdict)
	if c.Faults == nil || c.Verdict == "" || c.Faults.Repeats != repeat {
		t.Fatalf("cell lacks its fault report: %+v", c)
	}
	return c
}

// TestConnLeaseFaultsApply: the faults that apply to a lock of the
// connection's follow from the capability, and those that need a lease
// of another kind, a replica or a quorum do not.
func TestConnLeaseFaultsApply(t *testing.T) {
	for _, name := range []string{"pg-advisory", "pg-try", "pg-xact", "mysql-getlock"} {
		d, _ := impl.Lookup(name)
		got := engine.FaultsFor(d)
		for _, want := range []string{"crash", "pause", "restart"} {
			if !slices.Contains(got, want) {
				t.Errorf("%s: faults %v lack %s", name, got, want)
			}
		}
		for _, not := range []string{"failover", "partition"} {
			if slices.Contains(got, not) {
				t.Errorf("%s: faults %v hold %s, which it has no servers for", name, got, not)
			}
		}
		if _, bound := d.Caps.Lease(impl.Config{}); !strings.Contains(bound, "connection") {
			t.Errorf("%s: lease bound %q, want the connection named", name, bound)
		}
	}
	// A TTL lock with one server has no restart: that is a quorum's.
	redis, _ := impl.Lookup("redis")
	if slices.Contains(engine.FaultsFor(redis), "restart") {
		t.Error("redis: restart applies, want it only for quorum and connection locks")
	}
}

// TestConnLeaseCrashCutAndSilent: a reset holder's lock is freed in every
// repeat; a silent one's is either freed or reported unfreed, never an
// error; the keepalive in force is stated, and on PostgreSQL it is the one
// the scenario set on the session.
func TestConnLeaseCrashCutAndSilent(t *testing.T) {
	servers := dbServers(t)
	const repeat = 2
	for _, name := range connLocks {
		t.Run(name, func(t *testing.T) {
			c := runOn(t, servers, "crash", name, 3, repeat, nil)
			d := c.Faults.Details
			if c.SafetyViolations != 0 || c.Errors != 0 {
				t.Errorf("violations %d, errors %v: want none", c.SafetyViolations, c.ErrorsByClass)
			}
			if d["reset_recovered"] != repeat || c.Faults.RecoveryMs == nil || c.Faults.RecoveryMs.Count != repeat {
				t.Errorf("reset: recovered %v, recovery %+v: want %d", d["reset_recovered"], c.Faults.RecoveryMs, repeat)
			}
			if d["silent_recovered"]+d["silent_unfreed"] != repeat {
				t.Errorf("silent: recovered %v + unfreed %v, want %d in all", d["silent_recovered"], d["silent_unfreed"], repeat)
			}
			// Both waiters of both crashes of both repeats got the lock,
			// besides the holders: but for a silent holder never freed.
			want := int64(repeat*2*3) - 2*int64(d["silent_unfreed"])
			if c.Acquires != want {
				t.Errorf("acquisitions %d, want %d", c.Acquires, want)
			}
			if d["keepalive_idle_s"] <= 0 || d["keepalive_count"] <= 0 || !strings.Contains(c.Verdict, "TCP keepalive idle") {
				t.Errorf("keepalive not stated: details %v, verdict %q", d, c.Verdict)
			}
			if name == "pg-advisory" && (d["keepalive_idle_s"] != 1 || d["keepalive_interval_s"] != 1 || d["keepalive_count"] != 2) {
				t.Errorf("keepalive %v/%v/%v, want the 1 s, 1 s, 2 set on the session", d["keepalive_idle_s"], d["keepalive_interval_s"], d["keepalive_count"])
			}
			for _, s := range []string{"reset (RST)", "fell silent"} {
				if !strings.Contains(c.Verdict, s) {
					t.Errorf("verdict lacks %q: %s", s, c.Verdict)
				}
			}
			if d["silent_unfreed"] > 0 && !strings.Contains(c.Verdict, "never freed") {
				t.Errorf("verdict does not report the unfreed silent holder: %s", c.Verdict)
			}
		})
	}
}

// TestConnLeasePauseStallsWaiters: a paused holder keeps its lock: no
// violation, no grant during the pause, and the waiters' stall is at least
// the pause, in every repeat.
func TestConnLeasePauseStallsWaiters(t *testing.T) {
	servers := dbServers(t)
	const repeat, pause = 2, 300 * time.Millisecond
	for _, name := range connLocks {
		t.Run(name, func(t *testing.T) {
			c := runOn(t, servers, "pause", name, 3, repeat, map[string]string{faults.OptPauseFor: pause.String()})
			d := c.Faults.Details
			if c.SafetyViolations != 0 || d["granted_during_pause"] != 0 || d["holder_lost"] != 0 || d["unrecovered"] != 0 {
				t.Errorf("violations %d, granted during the pause %v, holder lost %v, unrecovered %v: want none",
					c.SafetyViolations, d["granted_during_pause"], d["holder_lost"], d["unrecovered"])
			}
			rec := c.Faults.RecoveryMs
			if rec == nil || rec.Count != repeat {
				t.Fatalf("stall measured in %+v repeats, want %d", rec, repeat)
			}
			// An ordering, not a time: no waiter can be granted before the
			// holder woke, so every stall is at least the pause.
			if rec.Min < d["pause_ms"] {
				t.Errorf("shortest stall %.1f ms < the pause %.1f ms", rec.Min, d["pause_ms"])
			}
			if c.Acquires != repeat*3 || c.Errors != 0 {
				t.Errorf("acquisitions %d, errors %v: want %d and none", c.Acquires, c.ErrorsByClass, repeat*3)
			}
			if !strings.Contains(c.Verdict, "kept the lock") || !strings.Contains(c.Verdict, "no violation") {
				t.Errorf("verdict: %s", c.Verdict)
			}
		})
	}
}

// TestConnLeaseRestartIsSeen: a server restart frees the lock under a
// holder that still believes it holds it: the checker counts the second
// holder's grant as a violation in every repeat, and the holder's release
// reports the lock lost.
func TestConnLeaseRestartIsSeen(t *testing.T) {
	servers := dbServers(t) // restart starts its own; these are the run's
	const repeat = 2
	for _, name := range connLocks {
		t.Run(name, func(t *testing.T) {
			c := runOn(t, servers, "restart", name, 2, repeat, nil)
			d := c.Faults.Details
			if c.SafetyViolations != repeat || d["overlapping_repeats"] != repeat {
				t.Errorf("violations %d in %v repeats, want %d in %d", c.SafetyViolations, d["overlapping_repeats"], repeat, repeat)
			}
			if d["holder_release_lost"] != repeat || d["holder_release_ok"] != 0 {
				t.Errorf("holder's release: lost %v, ok %v; want lost %d", d["holder_release_lost"], d["holder_release_ok"], repeat)
			}
			for _, v := range c.Violations {
				if v.Holder != 0 || v.Intruder != 1 || v.Kind != "overlap" {
					t.Errorf("violation %+v, want client 1 intruding on holder 0", v)
				}
			}
			if d["own_servers"] != 1 || !strings.Contains(c.Verdict, "reported the lock lost in 2") {
				t.Errorf("verdict: %s", c.Verdict)
			}
		})
	}
}
