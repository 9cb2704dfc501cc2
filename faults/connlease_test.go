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
	"github.com/lockbench/lockbench/report"
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
	cfg := impl.Config{Servers: servers, Options: opts, Namespace: fmt.Sprintf("%s-%d-%d", t.Name(), os.Getpid(), nsSeq.Add(1))}
	c, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: implName, Scenario: sc, Clients: clients, Repeat: repeat, ServerKinds: sandbox.Meter{}, Config: cfg, MaxTime: 2 * time.Minute,
	})
	if err != nil {
		t.Fatalf("%s %s: %v", scenario, implName, err)
	}
	t.Logf("%s %s: %s", scenario, implName, report.FaultSentence(c))
	checkFigures(t, c, scenario, implName)
	if c.Faults.Repeats != repeat {
		t.Fatalf("repeats = %d, want %d", c.Faults.Repeats, repeat)
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
// the scenario set on the session. The rows run side by side, each on a
// server of its own: most of their time is the silent holder's wait for
// TCP keepalive (at least 5 s a repeat).
func TestConnLeaseCrashCutAndSilent(t *testing.T) {
	servers := dbServers(t)
	const repeat = 2
	for _, name := range connLocks {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := runOn(t, servers, "crash", name, 3, repeat, nil)
			cc := c.Faults.ConnCrash
			if c.SafetyViolations != 0 || c.Errors != 0 {
				t.Errorf("violations %d, errors %v: want none", c.SafetyViolations, c.ErrorsByClass)
			}
			if cc.Reset.Recovered != repeat || cc.Reset.RecoveryMs == nil || cc.Reset.RecoveryMs.Count != repeat ||
				c.Faults.RecoveryMs == nil || *c.Faults.RecoveryMs != *cc.Reset.RecoveryMs {
				t.Errorf("reset: %+v, cell's recovery %+v: want %d recovered, the reset's recovery the cell's", cc.Reset, c.Faults.RecoveryMs, repeat)
			}
			if cc.Silent.Recovered+cc.Silent.Unfreed != repeat || (cc.Silent.RecoveryMs == nil) != (cc.Silent.Recovered == 0) {
				t.Errorf("silent: %+v, want %d recovered or unfreed in all, a recovery for those recovered", cc.Silent, repeat)
			}
			// Both waiters of both crashes of both repeats got the lock,
			// besides the holders: but for a silent holder never freed.
			want := int64(repeat*2*3) - 2*cc.Silent.Unfreed
			if c.Acquires != want || cc.Waiters != 2 {
				t.Errorf("acquisitions %d, want %d; waiters %d, want 2", c.Acquires, want, cc.Waiters)
			}
			k, sentence := cc.Keepalive, report.FaultSentence(c)
			if k == nil || !k.Reported || k.IdleS <= 0 || k.Count <= 0 || cc.SilentWaitMs < 5000 || !strings.Contains(sentence, "TCP keepalive idle") {
				t.Errorf("keepalive not stated: %+v, silent wait %v ms, sentence %q", k, cc.SilentWaitMs, sentence)
			}
			if name == "pg-advisory" && (k.IdleS != 1 || k.IntervalS != 1 || k.Count != 2) {
				t.Errorf("keepalive %+v, want the 1 s, 1 s, 2 set on the session", k)
			}
			for _, s := range []string{"reset (RST)", "fell silent"} {
				if !strings.Contains(sentence, s) {
					t.Errorf("sentence lacks %q: %s", s, sentence)
				}
			}
			if cc.Silent.Unfreed > 0 && !strings.Contains(sentence, "never freed") {
				t.Errorf("sentence does not report the unfreed silent holder: %s", sentence)
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
			p := c.Faults.ConnPause
			if c.SafetyViolations != 0 || p.GrantedDuringPause != 0 || p.HolderLost != 0 || p.Unrecovered != 0 {
				t.Errorf("violations %d, pause figures %+v: want none granted during the pause, lost or unrecovered",
					c.SafetyViolations, p)
			}
			if p.PauseMs != float64(pause.Milliseconds()) || p.PausedMsMax < p.PauseMs {
				t.Errorf("pause %v ms, longest %v ms: want %v, and at least that", p.PauseMs, p.PausedMsMax, pause)
			}
			rec := c.Faults.RecoveryMs
			if rec == nil || rec.Count != repeat {
				t.Fatalf("stall measured in %+v repeats, want %d", rec, repeat)
			}
			// An ordering, not a time: no waiter can be granted before the
			// holder woke, so every stall is at least the pause.
			if rec.Min < p.PauseMs {
				t.Errorf("shortest stall %.1f ms < the pause %.1f ms", rec.Min, p.PauseMs)
			}
			if c.Acquires != repeat*3 || c.Errors != 0 {
				t.Errorf("acquisitions %d, errors %v: want %d and none", c.Acquires, c.ErrorsByClass, repeat*3)
			}
			if s := report.FaultSentence(c); !strings.Contains(s, "kept the lock") || !strings.Contains(s, "no violation") {
				t.Errorf("sentence: %s", s)
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
			r := c.Faults.ConnRestart
			if c.SafetyViolations != repeat || r.OverlappingRepeats != repeat {
				t.Errorf("violations %d in %v repeats, want %d in %d", c.SafetyViolations, r.OverlappingRepeats, repeat, repeat)
			}
			if r.HolderReleaseLost != repeat || r.HolderReleaseOK != 0 || r.RestartMsMax <= 0 {
				t.Errorf("restart figures %+v; want the holder's release lost %d times, a restart time", r, repeat)
			}
			for _, v := range c.Violations {
				if v.Holder != 0 || v.Intruder != 1 || v.Kind != "overlap" {
					t.Errorf("violation %+v, want client 1 intruding on holder 0", v)
				}
			}
			if s := report.FaultSentence(c); !c.Faults.OwnServers || !strings.Contains(s, "reported the lock lost in 2") {
				t.Errorf("own servers %v, sentence: %s", c.Faults.OwnServers, s)
			}
		})
	}
}
