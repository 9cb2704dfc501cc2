package report

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

// schema2Dir holds results lockbench wrote before schema 3 (commit
// caa0581, `lockbench run --impl redis,redlock,zk-pred,pg-advisory
// --scenario crash,pause,failover,restart,latency,partition,freeze
// --clients 2 --repeat 1 --ttl 1s --zk-session-timeout 2s --pause-for
// 300ms --freeze-for 500ms --duration 1s --warmup 0s`): every fault cell
// has the sentence the faults package wrote, and its figures by name.
const schema2Dir = "testdata/schema2"

// schema2Settings are what that run's sentences needed beside the
// figures it kept: the settings and stagings that schema 3 keeps as
// typed figures and schema 2 kept in words only.
func schema2Settings(c *Cell) {
	f := c.Faults
	switch c.Impl {
	case "redis", "redlock":
		f.Bound = result.BoundTTL
	case "zk-pred":
		f.Bound = result.BoundSession
	}
	switch {
	case f.Pause != nil:
		f.Pause.LockFences = c.Impl == "zk-pred"
	case f.Failover != nil:
		f.Failover.Staged = map[string]result.Failover{"redis": result.FailoverReplica, "redlock": result.FailoverMaster,
			"zk-pred": result.FailoverFollower}[c.Impl]
	case f.Partition != nil:
		f.Partition.Masters, f.Partition.PhaseMs = 5, 1000
	case f.ConnCrash != nil:
		f.ConnCrash.Keepalive.Source = "tcp_keepalives_* set on the session"
	}
}

// TestFaultSentenceSaysWhatSchema2Said: phrased from the typed figures,
// every sentence of a real run is word for word what the faults package
// wrote for the same figures before it stopped writing sentences.
func TestFaultSentenceSaysWhatSchema2Said(t *testing.T) {
	t.Parallel()
	s, err := result.ReadSummary(filepath.Join(schema2Dir, result.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	scenarios := map[string]bool{}
	for _, c := range s.Cells {
		if c.Verdict == "" || c.Faults == nil {
			t.Fatalf("%s: no verdict or figures to compare with", c.Key())
		}
		if got := FaultSentence(c); got != c.Verdict {
			t.Errorf("%s: a legacy cell's sentence is %q, want its verdict as written", c.Key(), got)
		}
		old := c.Verdict
		c.Verdict, c.Faults.Details = "", nil
		schema2Settings(&c)
		if got := FaultSentence(c); got != old {
			t.Errorf("%s:\n got %s\nwant %s", c.Key(), got, old)
		}
		scenarios[c.Scenario] = true
	}
	if len(scenarios) != 7 {
		t.Errorf("compared %d scenarios' sentences, want all 7", len(scenarios))
	}
}

// TestFaultSentence covers what the real run above did not show: no
// recovery, a repeat that did not recover, settings other than the
// defaults, a livelock; the wording is the faults package's before
// schema 3, but for the ", and" between a silent holder's two fates.
func TestFaultSentence(t *testing.T) {
	t.Parallel()
	shard := 1
	livelock := &result.Livelock{LimitS: 0.2, AtS: 1.234, Attempts: 40, SplitVotes: 12, Errors: 3, LimitRetries: 20, LimitLeases: 2}
	sharded := *livelock
	sharded.Shard = &shard
	fault := func(impl string, violations int64, f result.Faults) Cell {
		return Cell{Impl: impl, Clients: 2, SafetyViolations: violations, Faults: &f}
	}
	rec := func(n int64, p50, max float64) *result.Spread { return &result.Spread{Count: n, P50: p50, Max: max} }
	for _, tc := range []struct {
		name string
		cell Cell
		want string
	}{
		{"none", Cell{Impl: "redis"}, ""},
		{"legacy verdict", Cell{Impl: "redis", Verdict: "as written", Faults: &result.Faults{Crash: &result.CrashFigures{}}}, "as written"},
		{"livelock", Cell{Impl: "redlock", Livelock: livelock},
			"LIVELOCK: no grant for 200ms while clients kept trying (limit max(20×retry, 2×lease)); the cell ended 1.2s in: 40 attempts did not get the lock, 12 of them split votes (some but not a majority of votes); 3 errors"},
		{"livelock of a shard", Cell{Impl: "redlock", Livelock: &sharded}, "shard 1: LIVELOCK: no grant for 200ms"},
		{"crash unrecovered", fault("redis", 0, result.Faults{Repeats: 2, Bound: result.BoundTTL, ConfiguredMs: 2000,
			Crash: &result.CrashFigures{Waiters: 1, Unrecovered: 2}}),
			"redis: no client got the lock after the holder's connection was cut in 2 repeats; no violation of mutual exclusion."},
		{"crash partly recovered", fault("zk", 1, result.Faults{Repeats: 2, Bound: result.BoundSession, ConfiguredMs: 2000,
			RecoveryMs: rec(1, 2040, 2040), Crash: &result.CrashFigures{Waiters: 1, Unrecovered: 1}}),
			"zk: after the holder's connection was cut the next client held the lock after 2.04s p50, 2.04s max over 1 repeat, against a session timeout of 2s (1 never recovered); 1 violation of mutual exclusion."},
		{"connection crash", fault("db", 0, result.Faults{Repeats: 2, Bound: result.BoundConn,
			ConnCrash: &result.ConnCrashFigures{SilentWaitMs: 8000, Keepalive: &result.Keepalive{},
				Silent: result.ConnEnd{Recovered: 1, Unfreed: 1, RecoveryMs: rec(1, 3000, 3000)}}}),
			"db, whose lock lasts as long as the holder's connection: after a reset (RST) no client got the lock in 2 repeats; a holder that fell silent (its connection left open, the proxy's kernel answering for it as a NAT or a load balancer would; unknown: the driver cannot say) was freed 3.00s p50 after it fell silent in 1 of 2 repeats, and was never freed within 8.00s in 1 of 2 repeats: the server saw a live peer, and keepalive frees a silent holder only where nothing answers its probes for it — a finding, not an error; no violation of mutual exclusion."},
		{"connection crash, keepalive unknown", fault("db", 0, result.Faults{Repeats: 1, RecoveryMs: rec(1, 2.5, 2.5),
			ConnCrash: &result.ConnCrashFigures{Reset: result.ConnEnd{Recovered: 1}, Keepalive: &result.Keepalive{Reported: true}}}),
			"db, whose lock lasts as long as the holder's connection: a holder whose connection was reset (RST) lost it at once, the next client holding it 2.50ms p50, 2.50ms max after the reset (1 of 1 repeats); a holder that fell silent (its connection left open, the proxy's kernel answering for it as a NAT or a load balancer would; TCP keepalive unknown); no violation of mutual exclusion."},
		{"connection pause", fault("db", 1, result.Faults{Repeats: 2, ConfiguredMs: 2000, RecoveryMs: rec(2, 2100, 2200),
			ConnPause: &result.ConnPauseFigures{PauseMs: 2000, GrantedDuringPause: 1, HolderLost: 2}}),
			"db: a holder that stalled 2s kept the lock throughout — its lock lasts as long as its connection, which stayed open — so the waiters stalled as long: the next grant came 2.10s p50, 2.20s max after the pause began (1.05× the pause), over 2 repeats; in 1 repeat a waiter was granted it during the pause; in 2 repeats the holder's release found the lock lost; 1 violation of mutual exclusion. No lease expired: a stalled holder blocks everyone for as long as it stalls."},
		{"connection pause unrecovered", fault("db", 0, result.Faults{Repeats: 1, ConnPause: &result.ConnPauseFigures{PauseMs: 300, Unrecovered: 1}}),
			"db: a holder that stalled 300ms kept the lock throughout — its lock lasts as long as its connection, which stayed open — and no waiter got it afterwards; no violation of mutual exclusion. No lease expired: a stalled holder blocks everyone for as long as it stalls."},
		{"pause, own token failed", fault("zk", 1, result.Faults{Repeats: 1, Bound: result.BoundSession, ConfiguredMs: 2000,
			Pause: &result.PauseFigures{LockFences: true}}),
			"zk: no other client got the lock while the holder stalled; its late write was stale in 0 of 1 repeats: accepted 0 times without fencing, and with fencing accepted 0, rejected 0. Its fencing token did not stop the stale write: unsafe."},
		{"failover unrecovered", fault("zk", 0, result.Faults{Repeats: 2, OwnServers: true,
			Failover: &result.FailoverFigures{Staged: result.FailoverFollower, HoldWindowMs: 3000}}),
			"zk: the follower holding the client's session killed; a second client got the lock while the first held it in 0 of 2 repeats; no violation of mutual exclusion. (Staged on servers of its own, started in a sandbox, not on the servers the run was given.)"},
		{"restart delayed under the TTL", fault("redlock", 1, result.Faults{Repeats: 1, ConfiguredMs: 1000, OwnServers: true,
			Restart: &result.RestartFigures{RestartDelayMs: 500, OverlappingRepeats: 1}}),
			"redlock: a master that granted the lock restarted empty after 500ms (< TTL 1s); a second client got the lock while the first still held it in 1 of 1 repeats; 1 violation of mutual exclusion. (Staged"},
		{"restart delayed a TTL", fault("redlock", 0, result.Faults{Repeats: 1, ConfiguredMs: 1000, OwnServers: true, RecoveryMs: rec(1, 1010, 1010),
			Restart: &result.RestartFigures{RestartDelayMs: 1000}}),
			"redlock: a master that granted the lock restarted empty after 1s (≥ TTL 1s); a second client got the lock while the first still held it in 0 of 1 repeats, 1.01s p50 after the crash; no violation"},
		{"connection restart, release failed", fault("db", 1, result.Faults{Repeats: 2, OwnServers: true,
			ConnRestart: &result.ConnRestartFigures{OverlappingRepeats: 1, HolderReleaseLost: 1, HolderReleaseFailed: 1}}),
			"db: the server restarted (killed, started again empty) while a client held the lock; a second client got the lock while the first still believed it held it in 1 of 2 repeats; the first holder's release then reported the lock lost in 1, succeeded in 0, failed otherwise in 1; 1 violation of mutual exclusion. A restart frees every lock, and a holder learns it only when it next speaks to the server. (Staged"},
		{"latency without servers", Cell{Impl: "inproc", Clients: 2, Acquires: 3000, AcquiresPerS: 1500,
			AcquireLatencyUs: result.Latency{P50: 12, P99: 40}, Faults: &result.Faults{Repeats: 1, Latency: &result.LatencyFigures{NetDelayMs: 1}}},
			"inproc has no servers, so no delay applied: acquire p50 12µs, p99 40µs, 3000 acquisitions by 2 clients at 1500/s, 0 errors; no violation of mutual exclusion."},
		{"latency with jitter", Cell{Impl: "redis", Clients: 1, Acquires: 1, AcquiresPerS: 1, Errors: 1, RoundTripsPerAcquire: 2,
			AcquireLatencyUs: result.Latency{P50: 5200, P99: 5200}, Faults: &result.Faults{Repeats: 1, Latency: &result.LatencyFigures{NetDelayMs: 2.5, NetJitterMs: 0.5, Proxies: 1}}},
			"redis behind proxies adding 2.5ms ± 500µs each way (at least 5ms per round trip): acquire p50 5.20ms, p99 5.20ms, 1 acquisition by 1 client at 1/s, 1 error, 2.0 round trips per acquisition; no violation of mutual exclusion."},
		{"ensemble partition, no move", Cell{Impl: "zk", Clients: 2, Errors: 1, Faults: &result.Faults{Repeats: 1, ConfiguredMs: 2000, Bound: result.BoundSession,
			EnsemblePartition: &result.EnsemblePartitionFigures{ServersCut: 1, SessionLost: 1}}},
			"zk: with the client's server cut off its session moved to another member in 0 of 1 repeats, 1 session lost, 0 acquisitions during the cut, 1 error; no violation of mutual exclusion."},
		{"freeze unrecovered", Cell{Impl: "zk", Clients: 2, Faults: &result.Faults{Repeats: 2, ConfiguredMs: 2000,
			Freeze: &result.FreezeFigures{Servers: 3, FrozenServers: 1, FreezeForMs: 2000, StallMsMax: 2500, AcquiresBefore: 1200, Unrecovered: 2, SessionLost: 2}}},
			"zk: one of its 3 servers stopped for 2s (SIGSTOP, then SIGCONT) while 2 clients looped on one lock: no grant for 2.50s at the longest, 0 acquisitions while it was stopped (1200 before, 0 after); in 2 repeats no grant came after it resumed; 0 errors, 2 sessions lost; no violation of mutual exclusion."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := FaultSentence(tc.cell)
			if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
				t.Errorf("\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestRenderSchema2Results renders results written before schema 3 with
// this lockbench: their fault cells keep the verdicts they were written
// with, in the headlines of summary.md and in report.html's Faults table,
// and the typed figures read from their named ones fill report.html's
// "Fault cost" line (fenced stale grants, the pause, the silent holder).
func TestRenderSchema2Results(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{result.SummaryFile, result.MetaFile} {
		b, err := os.ReadFile(filepath.Join(schema2Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Render(dir, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	md, page := read("summary.md"), html.UnescapeString(read("report.html"))
	s, err := result.ReadSummary(filepath.Join(dir, result.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Cells {
		if headline := strings.TrimRight(strings.TrimPrefix(c.Verdict, c.Impl+": "), ". "); !strings.Contains(md, mdEscape(headline)) {
			t.Errorf("%s: summary.md lacks its verdict %q", c.Key(), headline)
		}
		if !strings.Contains(page, c.Verdict) {
			t.Errorf("%s: report.html lacks its verdict %q", c.Key(), c.Verdict)
		}
	}
	// The Fault cost table is filled from the figures the upgrade typed,
	// in summary.md as in the verdict.
	for _, want := range []string{
		"| zk-pred | pause | 2.14s | 2.14s | bound 2.00s | 1 stale grant, fenced |",
		"| redis | pause | 1.01s | 1.01s | bound 1.00s | UNSAFE — 1 violation (stale writes accepted) |",
		"| pg-advisory | crash | 3.18ms | 3.18ms | — | ✓ safe; a silent holder never freed within 8.00s in 1 of 1 repeats |",
		"| pg-advisory | pause | 301.7ms | 301.7ms | pause 300.0ms | ✓ safe |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md's fault cost lacks %q", want)
		}
	}
}
