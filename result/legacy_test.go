package result

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// schema2 is a summary.json that lockbench wrote before schema 3: fault
// cells of every scenario on redis, redlock, zk-pred and pg-advisory, each
// with its verdict and its figures by name.
const schema2 = "../report/testdata/schema2/summary.json"

// TestReadSummarySchema2 reads results written before schema 3: the cells
// keep their verdicts and named figures as written, and the typed figures
// are set from them, so readers of the typed fields find them.
func TestReadSummarySchema2(t *testing.T) {
	t.Parallel()
	s, err := ReadSummary(schema2)
	if err != nil {
		t.Fatal(err)
	}
	if s.Schema != 2 || len(s.Cells) != 23 {
		t.Fatalf("schema %d, %d cells; want the testdata's 2 and 23", s.Schema, len(s.Cells))
	}
	// Each scenario's figure as typed, and the name it was kept under.
	typed := map[string]func(f *Faults) (float64, string){
		"redis/crash":      func(f *Faults) (float64, string) { return float64(f.Crash.Waiters), "waiters" },
		"redis/pause":      func(f *Faults) (float64, string) { return float64(f.Pause.UnfencedAccepted), "unfenced_accepted" },
		"redis/failover":   func(f *Faults) (float64, string) { return float64(f.Failover.Promoted), "promoted" },
		"redlock/failover": func(f *Faults) (float64, string) { return float64(f.Failover.MastersKilled), "masters_killed" },
		"zk-pred/failover": func(f *Faults) (float64, string) { return f.Failover.SessionMoveMsMean, "session_move_ms_mean" },
		"redlock/restart": func(f *Faults) (float64, string) {
			return float64(f.Restart.FirstHolderMasters), "first_holder_masters"
		},
		"redis/latency":     func(f *Faults) (float64, string) { return f.Latency.NetDelayMs, "net_delay_ms" },
		"redlock/partition": func(f *Faults) (float64, string) { return f.Partition.FailMsMaxMajorityCut, "fail_ms_majority_cut_max" },
		"zk-pred/partition": func(f *Faults) (float64, string) {
			return float64(f.EnsemblePartition.AcquiresDuringCut), "acquires_during_cut"
		},
		"zk-pred/freeze":    func(f *Faults) (float64, string) { return f.Freeze.StallMsMax, "stall_ms_max" },
		"pg-advisory/crash": func(f *Faults) (float64, string) { return f.ConnCrash.SilentWaitMs, "silent_wait_ms" },
		"pg-advisory/pause": func(f *Faults) (float64, string) { return f.ConnPause.PauseMs, "pause_ms" },
		"pg-advisory/restart": func(f *Faults) (float64, string) {
			return float64(f.ConnRestart.HolderReleaseLost), "holder_release_lost"
		},
	}
	seen := 0
	for _, c := range s.Cells {
		if c.Faults == nil || c.Verdict == "" || !strings.HasPrefix(c.Verdict, c.Impl) {
			t.Errorf("%s: faults %v, verdict %q: want both as written", c.Key(), c.Faults, c.Verdict)
			continue
		}
		get, ok := typed[c.Impl+"/"+c.Scenario]
		if !ok {
			continue
		}
		seen++
		got, key := get(c.Faults)
		if want, kept := c.Faults.Details[key]; !kept || got != want || got == 0 {
			t.Errorf("%s: typed %v, named %s %v (kept %v): want the same, not 0", c.Key(), got, key, want, kept)
		}
		if own := c.Faults.Details["own_servers"] == 1; c.Faults.OwnServers != own {
			t.Errorf("%s: own servers %v, named %v", c.Key(), c.Faults.OwnServers, own)
		}
	}
	if seen != len(typed) {
		t.Errorf("checked %d cells, want %d", seen, len(typed))
	}
}

// TestSummaryHasNoProse: a cell written now (schema 3 and on) holds
// typed figures only: no "verdict", no "details", and the figures read
// back as written.
func TestSummaryHasNoProse(t *testing.T) {
	t.Parallel()
	c := Cell{Impl: "pg", Scenario: "crash", Clients: 3, Faults: &Faults{Repeats: 2, Bound: BoundConn,
		ConnCrash: &ConnCrashFigures{Waiters: 2, SilentWaitMs: 8000, Silent: ConnEnd{Unfreed: 2},
			Reset:     ConnEnd{Recovered: 2, RecoveryMs: &Spread{Count: 2, P50: 3, Max: 4}},
			Keepalive: &Keepalive{Reported: true, IdleS: 1, IntervalS: 1, Count: 2, Source: "set on the session"}}}}
	path := filepath.Join(t.TempDir(), "summary.json")
	if err := WriteJSON(path, Summary{Schema: SchemaVersion, Cells: []Cell{c}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"verdict"`, `"details"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("summary.json holds %s:\n%s", key, b)
		}
	}
	s, err := ReadSummary(path)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(s.Cells[0].Faults)
	want, _ := json.Marshal(c.Faults)
	if s.Schema != SchemaVersion || string(got) != string(want) {
		t.Errorf("schema %d, faults read back\n%s\nwant\n%s", s.Schema, got, want)
	}
}

// A cell written before schema 4 had only its servers' counters by name:
// each kind's messages read in its own unit, as they were rendered then,
// and a kind that counted none gives none.
func TestLegacyServerCounts(t *testing.T) {
	for _, tc := range []struct {
		server map[string]int64
		n      int64
		unit   string
	}{
		{map[string]int64{"packets_received": 61, "packets_sent": 97, "watch_triggered": 36}, 158, "packets"},
		{map[string]int64{"grpc_messages_received": 40, "grpc_messages_sent": 50, "watch_triggered": 7}, 90, "gRPC messages"},
		{map[string]int64{"cmdstat_set_calls": 8, "cmdstat_evalsha_calls": 51, "cmdstat_info_calls": 1, "client_notifications": 28}, 87, "commands + pushes"},
		// A cluster: its bus, heartbeats aside, not its commands.
		{map[string]int64{"cmdstat_evalsha_calls": 51, "cluster_messages_sent": 30, "cluster_stats_messages_ping_sent": 5,
			"cluster_stats_messages_pong_sent": 7, "cluster_stats_messages_meet_sent": 2, "cluster_stats_messages_publish_sent": 16}, 16, "cluster-bus messages (heartbeats aside)"},
	} {
		n, unit, ok := legacyServerCounts(tc.server).Handled()
		if !ok || n != tc.n || unit != tc.unit {
			t.Errorf("%v: %d %q %v, want %d %q", tc.server, n, unit, ok, tc.n, tc.unit)
		}
	}
	if _, _, ok := legacyServerCounts(map[string]int64{"pg_xact_commit": 128}).Handled(); ok {
		t.Error("PostgreSQL's commits counted as messages")
	}

	c := legacyServerCounts(map[string]int64{"watch_triggered": 36, "client_notifications": 35, "total_forks": 2})
	if c.Watches == nil || *c.Watches != 36 || c.ClientNotifications != 35 || c.Forks != 2 {
		t.Errorf("watches %v, notifications %d, forks %d: want 36, 35, 2", c.Watches, c.ClientNotifications, c.Forks)
	}
}
