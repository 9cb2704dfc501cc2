package faults_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	_ "github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/impl"
	_ "github.com/lockbench/lockbench/impl/all"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/sandboxtest"
)

// servers are a test's servers: one Redis (also the first of five
// Redlock masters) and a standalone ZooKeeper, as the drivers the tests
// stage faults on declare them. Runners that must kill or replicate start
// their own.
func servers(t *testing.T) impl.Servers {
	t.Helper()
	var needs []impl.Need
	for _, name := range []string{"redis", "redlock", "zk-pred"} {
		d, ok := impl.Lookup(name)
		if !ok {
			t.Fatalf("no driver %s", name)
		}
		needs = append(needs, d.Needs...)
	}
	return sandboxtest.Start(t, needs...)
}

// TestMain fails the package when a runner left a server running. The
// cells' wake probe, which lives as long as this process, is stopped first.
func TestMain(m *testing.M) {
	code := m.Run()
	engine.StopWakeProbe()
	if left := children(); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "processes left running: %s\n", strings.Join(left, "; "))
		code = 1
	}
	os.Exit(code)
}

// children lists this process's child processes still alive: every server
// a runner started is one, so none may be left.
func children() []string {
	self := strconv.Itoa(os.Getpid())
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces, so cut at the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == self && f[0] != "Z" {
			cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}

// nsSeq numbers the cells of this process, whose subtests may run side
// by side.
var nsSeq atomic.Int64

// run runs one fault cell through the harness, as `lockbench run` does.
func run(t *testing.T, scenario, implName string, repeat int, cfg impl.Config) result.Cell {
	t.Helper()
	sc, ok := engine.LookupScenario(scenario)
	if !ok {
		t.Fatalf("no scenario %s", scenario)
	}
	cfg.Servers = servers(t)
	cfg.Namespace = fmt.Sprintf("%s-%d-%d", t.Name(), os.Getpid(), nsSeq.Add(1))
	start := time.Now()
	c, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: implName, Scenario: sc, Clients: 2, Repeat: repeat, Config: cfg, MaxTime: 2 * time.Minute,
		Guard: true, // as the plan has the fault scenarios by default
	})
	if err != nil {
		t.Fatalf("%s %s: %v", scenario, implName, err)
	}
	t.Logf("%s %s in %v: %s", scenario, implName, time.Since(start).Round(time.Millisecond), report.FaultSentence(c))
	checkFigures(t, c, scenario, implName)
	if c.Faults.Repeats != repeat {
		t.Errorf("repeats = %d, want %d", c.Faults.Repeats, repeat)
	}
	return c
}

// checkFigures fails the test unless the cell carries its scenario's
// typed figures, exactly one struct of them, and no sentence: the
// scenarios measure, report phrases.
func checkFigures(t *testing.T, c result.Cell, scenario, implName string) {
	t.Helper()
	f := c.Faults
	if f == nil || c.Scenario != scenario || c.Impl != implName {
		t.Fatalf("cell lacks its fault report: %+v", c)
	}
	set := 0
	for _, p := range []bool{f.Crash != nil, f.ConnCrash != nil, f.Pause != nil, f.ConnPause != nil, f.Failover != nil,
		f.Restart != nil, f.ConnRestart != nil, f.Latency != nil, f.Partition != nil, f.EnsemblePartition != nil, f.Freeze != nil,
		f.DeadWaiters != nil, f.Pauses != nil, f.ClockJump != nil} {
		if p {
			set++
		}
	}
	if set != 1 || c.Verdict != "" || f.Details != nil || report.FaultSentence(c) == "" {
		t.Fatalf("%s %s: %d figure structs, verdict %q, details %v; want one struct, no prose, a sentence from the figures",
			scenario, implName, set, c.Verdict, f.Details)
	}
}

func TestCrashRecoversAfterTTLOrSessionTimeout(t *testing.T) {
	const ttl, session = time.Second, 2 * time.Second
	for _, tc := range []struct {
		impl   string
		repeat int
		lo, hi time.Duration
		bound  result.Bound
	}{
		{"redis", 2, ttl * 8 / 10, ttl + 1500*time.Millisecond, result.BoundTTL},
		{"redlock", 1, ttl * 8 / 10, ttl + 1500*time.Millisecond, result.BoundTTL},
		// The server expires sessions on tick boundaries.
		{"zk-pred", 1, session / 2, 2*session + 2*time.Second, result.BoundSession},
	} {
		t.Run(tc.impl, func(t *testing.T) {
			c := run(t, "crash", tc.impl, tc.repeat, impl.Config{TTL: ttl, SessionTimeout: session})
			rec := c.Faults.RecoveryMs
			if rec == nil || rec.Count != int64(tc.repeat) {
				t.Fatalf("recovery %+v, want one per repeat", rec)
			}
			lo, hi := float64(tc.lo.Milliseconds()), float64(tc.hi.Milliseconds())
			if rec.Min < lo || rec.Max > hi {
				t.Errorf("recovery %.0f–%.0f ms, want within [%.0f, %.0f]", rec.Min, rec.Max, lo, hi)
			}
			if c.SafetyViolations != 0 {
				t.Errorf("violations %d: %+v", c.SafetyViolations, c.Violations)
			}
			if c.Acquires != int64(2*tc.repeat) {
				t.Errorf("acquires %d, want %d (holder and waiter each repeat)", c.Acquires, 2*tc.repeat)
			}
			if f := c.Faults; f.Bound != tc.bound || f.Crash.Waiters != 1 || f.Crash.Unrecovered != 0 {
				t.Errorf("bound %q, crash figures %+v; want %q, 1 waiter, every repeat recovered", f.Bound, f.Crash, tc.bound)
			}
		})
	}
}

func TestPauseStaleWriteOnlyFencingRejects(t *testing.T) {
	// A lock without fencing tokens (the Redis locks, zk-lock) leaves its
	// users' stale write accepted: unsafe. One with them (zk-pred) gets a
	// stale grant whose write the token turned away: fenced, not a
	// violation.
	for _, tc := range []struct {
		impl   string
		unsafe bool
	}{{"redis", true}, {"redlock", true}, {"zk-pred", false}, {"zk-lock", true}} {
		t.Run(tc.impl, func(t *testing.T) {
			c := run(t, "pause", tc.impl, 1, impl.Config{TTL: time.Second, SessionTimeout: 2 * time.Second})
			f := c.Faults
			if f.StaleWritesRejected == 0 || f.StaleWritesAccepted != 0 {
				t.Errorf("fenced resource: accepted %d, rejected %d; want 0 and > 0", f.StaleWritesAccepted, f.StaleWritesRejected)
			}
			if p := f.Pause; p == nil || p.UnfencedAccepted == 0 || p.StaleWrites != 1 || p.LockFences == tc.unsafe {
				t.Errorf("pause figures %+v: want 1 stale write the unfenced resource accepted, lock fences %v", p, !tc.unsafe)
			}
			// The stalled holder read the guarded register before its stall
			// and wrote after the new holder read: the unfenced counter
			// loses the new holder's increment, the fenced one refuses the
			// stale write and loses nothing.
			if s := c.Safety; s == nil || !s.Guarded || s.GuardedWrites != 2 || s.LostUpdates != 1 ||
				s.LostUpdatesFenced != 0 || s.StaleWritesRefused != 1 || s.GuardErrors != 0 {
				t.Errorf("guarded register: %+v; want 2 writes, 1 lost unfenced, 0 fenced, 1 refused", s)
			}
			if !tc.unsafe {
				if c.SafetyViolations != 0 {
					t.Errorf("fenced stale grant counted as %d violations: %+v", c.SafetyViolations, c.Violations)
				}
				return
			}
			if c.SafetyViolations == 0 || c.Violations[0].Kind != "stale_write" {
				t.Fatalf("violations %d %+v, want a stale_write", c.SafetyViolations, c.Violations)
			}
			if v := c.Violations[0]; v.Token >= v.PrevToken {
				t.Errorf("stale token %d not below the new holder's %d", v.Token, v.PrevToken)
			}
		})
	}
}

func TestFailoverOnlyAsyncReplicaLosesTheLock(t *testing.T) {
	for _, tc := range []struct {
		impl   string
		want   int64 // violations over 2 repeats
		staged result.Failover
	}{
		{"redis", 2, result.FailoverReplica},
		{"redlock", 0, result.FailoverMaster},
		{"zk-pred", 0, result.FailoverFollower},
	} {
		t.Run(tc.impl, func(t *testing.T) {
			c := run(t, "failover", tc.impl, 2, impl.Config{TTL: time.Second, SessionTimeout: 2 * time.Second})
			if c.SafetyViolations != tc.want {
				t.Errorf("violations %d, want %d: %+v", c.SafetyViolations, tc.want, c.Violations)
			}
			if c.Faults.RecoveryMs == nil || c.Faults.RecoveryMs.Count != 2 {
				t.Errorf("the second client did not get the lock in every repeat: %+v", c.Faults.RecoveryMs)
			}
			fo := c.Faults.Failover
			if !c.Faults.OwnServers || !strings.HasSuffix(report.FaultSentence(c), "not on the servers the run was given.)") {
				t.Errorf("the failover does not say it ran on servers of its own: %q", report.FaultSentence(c))
			}
			if fo.OverlappingRepeats != tc.want || fo.HoldWindowMs <= 0 || fo.Staged != tc.staged {
				t.Errorf("failover figures %+v: want %d overlapping repeats, a hold window, staged %s", fo, tc.want, tc.staged)
			}
			if tc.impl == "zk-pred" && (fo.SessionMoved != 2 || fo.SessionLost != 0 || fo.SessionMoveMsMean <= 0) {
				t.Errorf("session moved %d times (mean %.0f ms), lost %d; want 2 and 0", fo.SessionMoved, fo.SessionMoveMsMean, fo.SessionLost)
			}
		})
	}
}

func TestRestartNeedsDelayOfTTL(t *testing.T) {
	const ttl = time.Second
	for _, tc := range []struct {
		delay  time.Duration
		unsafe bool
	}{
		{0, true},
		{ttl, false},
	} {
		t.Run(tc.delay.String(), func(t *testing.T) {
			c := run(t, "restart", "redlock", 1, impl.Config{TTL: ttl,
				Options: map[string]string{"redlock-restart-delay": tc.delay.String()}})
			if got := c.SafetyViolations > 0; got != tc.unsafe {
				t.Errorf("violations %d, want unsafe=%v: %s", c.SafetyViolations, tc.unsafe, report.FaultSentence(c))
			}
			r := c.Faults.Restart
			if r.FirstHolderMasters != 3 || r.RestartDelayMs != float64(tc.delay.Milliseconds()) || r.OverlappingRepeats != c.SafetyViolations {
				t.Errorf("restart figures %+v: want the first holder granted by exactly 3 masters, the delay, the overlaps", r)
			}
		})
	}
}

func TestLatencyAddsDelayEachWay(t *testing.T) {
	const delay = 5 * time.Millisecond
	sc, _ := engine.LookupScenario("latency")
	c, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: "redis", Scenario: sc, Clients: 2, Duration: time.Second,
		ServerKinds: sandbox.Meter{},
		Config: impl.Config{Servers: servers(t), Namespace: fmt.Sprintf("latency-%d", os.Getpid()),
			Options: map[string]string{"net-delay": delay.String(), "net-jitter": "1ms"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(report.FaultSentence(c))
	if c.Acquires == 0 {
		t.Fatal("no acquisitions")
	}
	if p50 := c.AcquireLatencyUs.P50; p50 < float64(2*delay/time.Microsecond) {
		t.Errorf("p50 acquire %.0fµs, want ≥ %v (a round trip crosses the proxy twice)", p50, 2*delay)
	}
	if l := c.Faults.Latency; l == nil || l.NetDelayMs != 5 || l.NetJitterMs != 1 || l.Proxies != 1 || c.Scenario != "latency" {
		t.Errorf("latency figures %+v, scenario %s; want 5 ms ± 1 ms through 1 proxy", l, c.Scenario)
	}
}

func TestPartitionMinorityWorksMajorityFailsFast(t *testing.T) {
	t.Run("redlock", func(t *testing.T) {
		c := run(t, "partition", "redlock", 1, impl.Config{TTL: time.Second})
		p := c.Faults.Partition
		if p.AcquiresMinorityCut == 0 || p.Masters != 5 || p.MastersCutMinority != 1 || p.MastersCutMajority != 3 {
			t.Errorf("one master cut: %+v; want acquisitions, 1 of 5 masters cut, then 3", p)
		}
		if c.ErrorsByClass["no_quorum"] == 0 || p.NoQuorumMajorityCut != p.AttemptsMajorityCut || p.HungMajorityCut != 0 || p.AcquiresMajorityCut != 0 {
			t.Errorf("three masters cut: errors %v, figures %+v; want no_quorum, none hung or granted", c.ErrorsByClass, p)
		}
		// Fast means within the lock's own TTL: no waiting out the grant.
		if p.FailMsMaxMajorityCut >= 1000 {
			t.Errorf("no_quorum took %v ms, no faster than the 1 s TTL", p.FailMsMaxMajorityCut)
		}
		if c.SafetyViolations != 0 {
			t.Errorf("violations %+v", c.Violations)
		}
	})
	t.Run("zk-pred", func(t *testing.T) {
		c := run(t, "partition", "zk-pred", 1, impl.Config{SessionTimeout: 2 * time.Second})
		p := c.Faults.EnsemblePartition
		if c.SafetyViolations != 0 {
			t.Errorf("violations %+v", c.Violations)
		}
		if p.SessionMoved+p.SessionLost == 0 || p.ServersCut != 1 {
			t.Errorf("the holder's session neither moved nor expired, or not one server cut: %+v", p)
		}
		if p.AcquiresDuringCut == 0 {
			t.Errorf("nobody held the lock during the cut: %+v", p)
		}
	})
}

// A fault applies by capability: a driver without what the fault needs
// is refused with a usage error that says what it lacks.
func TestScenarioSaysWhyItDoesNotApply(t *testing.T) {
	// On a Redis Cluster the clients go to the nodes' own addresses, past
	// the proxies the crash, pause, latency and partition faults put in
	// front of the addresses given.
	cluster := map[string]string{"redis-topology": "cluster"}
	for _, tc := range []struct {
		scenario, impl, why string
		options             map[string]string
	}{
		{"crash", "inproc", "no lease that ends without its holder", nil},
		{"restart", "redis", "quorum of masters", nil},
		{"partition", "redis", "has neither", nil},
		{"crash", "redis-pubsub", "past any proxy", cluster},
		{"latency", "redis-fair", "past any proxy", cluster},
		{"pause", "redis-fenced", "past any proxy", cluster},
	} {
		sc, _ := engine.LookupScenario(tc.scenario)
		_, err := engine.RunCell(context.Background(), engine.CellSpec{Impl: tc.impl, Scenario: sc, Clients: 1,
			Config: impl.Config{Options: tc.options}})
		if !errors.Is(err, engine.ErrNotApplicable) || !strings.Contains(fmt.Sprint(err), tc.why) {
			t.Errorf("%s on %s: %v; want not-applicable saying %q", tc.scenario, tc.impl, err, tc.why)
		}
	}
}

// TestDeadWaitersStallAsTheLockKeepsThem: a dead waiter holds up the
// live one behind it for as long as the lock keeps what it left queued —
// a ZooKeeper recipe's node until its session expires, Redisson's fair
// lock's place until the lock's TTL and the wait timeout pass — and a
// poller's for no longer than its next poll.
func TestDeadWaitersStallAsTheLockKeepsThem(t *testing.T) {
	const ttl, session, fairWait = time.Second, time.Second, 500 * time.Millisecond
	for _, tc := range []struct {
		impl    string
		bound   time.Duration
		lo, hi  time.Duration
		setting string
	}{
		{"redis", 0, 0, 500 * time.Millisecond, ""},
		{"zk-pred", session, session / 2, 2*session + 2*time.Second, "session timeout"},
		{"redis-fair", ttl + fairWait, (ttl + fairWait) * 8 / 10, ttl + fairWait + 1500*time.Millisecond, "--ttl + --fair-wait"},
	} {
		t.Run(tc.impl, func(t *testing.T) {
			sc, _ := engine.LookupScenario("deadwait")
			cfg := impl.Config{TTL: ttl, SessionTimeout: session, Servers: servers(t),
				Namespace: fmt.Sprintf("%s-%d-%d", t.Name(), os.Getpid(), nsSeq.Add(1)), Options: map[string]string{"fair-wait": fairWait.String()}}
			c, err := engine.RunCell(context.Background(), engine.CellSpec{Impl: tc.impl, Scenario: sc, Clients: 3, Repeat: 1, Config: cfg, MaxTime: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			t.Log(report.FaultSentence(c))
			checkFigures(t, c, "deadwait", tc.impl)
			d := c.Faults.DeadWaiters
			if d.Dead != 1 || d.BoundMs != float64(tc.bound.Milliseconds()) || d.BoundSetting != tc.setting {
				t.Errorf("figures %+v, want 1 dead waiter and a bound of %v (%s)", d, tc.bound, tc.setting)
			}
			st := d.Reset.StallMs
			if st == nil || st.Count != 1 || d.Reset.Unfreed != 0 {
				t.Fatalf("stall %+v, unfreed %d: want the live waiter granted in the one repeat", st, d.Reset.Unfreed)
			}
			if lo, hi := float64(tc.lo.Milliseconds()), float64(tc.hi.Milliseconds()); st.P50 < lo || st.P50 > hi {
				t.Errorf("stall %.0f ms, want within [%.0f, %.0f]", st.P50, lo, hi)
			}
			if c.SafetyViolations != 0 {
				t.Errorf("violations %d", c.SafetyViolations)
			}
		})
	}
	// Two clients leave no room for a dead waiter and a live one.
	sc, _ := engine.LookupScenario("deadwait")
	_, err := engine.RunCell(context.Background(), engine.CellSpec{Impl: "redis", Scenario: sc, Clients: 2, Repeat: 1,
		Config: impl.Config{Servers: servers(t), Namespace: t.Name()}})
	if !errors.Is(err, engine.ErrUsage) {
		t.Errorf("2 clients: %v, want a usage error", err)
	}
}

// Three dead waiters are buried however long their calls hang: etcd's
// dead waiters' calls hang on their cut connections, and each must be
// given up on its bury's one deadline (a run of five etcd clients once
// waited on the second for ever).
func TestThreeDeadWaitersAreBuried(t *testing.T) {
	sc, _ := engine.LookupScenario("deadwait")
	d, _ := impl.Lookup("etcd")
	cfg := impl.Config{TTL: time.Second, SessionTimeout: time.Second, Servers: sandboxtest.Start(t, d.Needs...),
		Namespace: fmt.Sprintf("%s-%d-%d", t.Name(), os.Getpid(), nsSeq.Add(1))}
	c, err := engine.RunCell(context.Background(), engine.CellSpec{Impl: "etcd", Scenario: sc, Clients: 5, Repeat: 1, Config: cfg, MaxTime: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(report.FaultSentence(c))
	if d := c.Faults.DeadWaiters; d.Dead != 3 || d.Reset.StallMs == nil || d.Reset.StallMs.Count != 1 || c.Truncated != "" {
		t.Errorf("figures %+v, truncated %q: want 3 dead waiters and the live one granted", d, c.Truncated)
	}
}
