package report

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

// The Safety table has a row per lock and scenario, faults after the
// load, says what was not measured as "–", and names the shortest illegal
// window of a history that is not linearizable.
func TestSafetyTable(t *testing.T) {
	t.Parallel()
	cells := []result.Cell{
		{Impl: "redis", Scenario: "pause", Clients: 2, Safety: &result.Safety{Guarded: true, Tokens: result.TokensCounter, Linearizable: result.Linearizable, LeaseExpiries: 3, Ops: 12, Windows: 3, CheckMs: 2, GuardCounts: result.GuardCounts{StaleWritesUnfenced: 3, GuardedWrites: 7, StaleWritesRefused: 2, LostUpdates: 4, GuardErrors: 1}}},
		{Impl: "redis", Scenario: "hot", Clients: 32, Safety: &result.Safety{Tokens: result.TokensNone,
			Linearizable: result.NotLinearizable, Ops: 1000, Unknown: 2, Windows: 1, CheckMs: 1500, CheckAllocMB: 12,
			Illegal: &result.IllegalWindow{Lock: "lock-0", FromS: 1.5, ToS: 1.52, Ops: 4, Clients: []int{3},
				Stuck: "client 3 try → held", File: "x.linearizability.html"}}},
		{Impl: "etcd", Scenario: "hot", Clients: 1}, // no safety figures: no row
		{Impl: "redis", Scenario: "crash", Clients: 2, Safety: &result.Safety{Guarded: true, Tokens: result.TokensNone, GuardCounts: result.GuardCounts{GuardedWrites: 5, StaleWritesUnfenced: 1, LostUpdates: 1}}},
		{Impl: "pg-advisory", Scenario: "pause", Clients: 2, Safety: &result.Safety{GuardNote: "pg-advisory's servers keep no guarded register"}},
	}
	got := string(safetyTable(cells))
	lines := strings.Split(got, "\n")
	var rows []string
	for _, l := range lines {
		if strings.HasPrefix(l, "| redis") || strings.HasPrefix(l, "| etcd") || strings.HasPrefix(l, "| pg") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 4 || !strings.HasPrefix(rows[1], "| redis | hot | 32 |") || !strings.HasPrefix(rows[2], "| redis | pause |") ||
		!strings.HasPrefix(rows[3], "| redis | crash |") {
		t.Fatalf("rows:\n%s", strings.Join(rows, "\n"))
	}
	pg := rows[0]
	rows = rows[1:]
	for _, want := range []string{"| **NO** |", "1,000 (2 unknown)", "1.50 s, 12 MB in 1 window"} {
		if !strings.Contains(rows[0], want) {
			t.Errorf("hot row lacks %q: %s", want, rows[0])
		}
	}
	// Unguarded: "–" throughout; guarded with tokens: every figure; with
	// none, the fenced counter's figures are "–", since it fenced nothing.
	if !strings.Contains(rows[0], "| – | – | – | – |") || !strings.Contains(pg, "| – | – | – | – |") {
		t.Errorf("unguarded rows: %q, %q", rows[0], pg)
	}
	if !strings.Contains(rows[1], "| 7 | 0 / 3 | 2 | 0 / 4 |") {
		t.Errorf("guarded pause row: writes, stale, refused, lost: %q", rows[1])
	}
	if !strings.Contains(rows[2], "| 5 | – / 1 | – | – / 1 |") {
		t.Errorf("guarded row without tokens: %q", rows[2])
	}
	for _, want := range []string{"pg-advisory pause: no guarded register: pg-advisory's servers keep no guarded register",
		"redis pause: 1 access to the guarded register failed"} {
		if !strings.Contains(got, want) {
			t.Errorf("notes lack %q:\n%s", want, got)
		}
	}
	if !strings.Contains(got, `lock-0 (phase 0), 1.500–1.520 s after the start, 4 operations of clients [3]; no order explains "client 3 try → held"; see x.linearizability.html`) {
		t.Errorf("no illegal window named:\n%s", got)
	}
}
