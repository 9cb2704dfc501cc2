package report

import (
	"bytes"
	"github.com/lockbench/lockbench/judge"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lockbench/lockbench/result"
)

// TestTableFits100Columns checks the default table at its widest: the
// longest implementation and scenario names, herd columns, slow and
// failing cells, and every kind of note under a row.
func TestTableFits100Columns(t *testing.T) {
	theory, fired := int64(32640), int64(33000)
	cells := append(fixtureCells(),
		Cell{Impl: "redis-pubsub", Scenario: "partition", Clients: 12800, Acquires: 123456, AcquiresPerS: 1234567.8,
			Errors: 99999, ErrorsByClass: map[string]int64{"timeout": 99990, "no_quorum": 9},
			AcquireLatencyUs:        result.Latency{P50: 123456, P99: 987654, P999: 2.5e6, Max: 9e8},
			NotificationsPerAcquire: 1234.5, RetriesPerAcquire: 99.99, TheoryWakeups: &theory,
			ServerCounts: &result.ServerCounts{Watches: &fired, ClientNotifications: 32640},
			Open:         &result.OpenLoop{Offered: 1e6, Rate: 5000, Arrival: "poisson", Dropped: 12345, Unfinished: 17},
			Verdict:      "the holder's session expired 10.2s after the pause began, beyond the 4s session timeout; a second client then held the lock while the first still wrote"},
	)
	cells[len(cells)-1].Wakeups, cells[len(cells)-1].ReleaseWakeups = 32640, 32640
	var b bytes.Buffer
	if err := WriteTable(&b, cells); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > TableWidth {
			t.Errorf("line of %d characters, over %d:\n%s", n, TableWidth, l)
		}
	}
	head := lines[0]
	for _, col := range []string{"impl", "scenario", "clients", "acq/s", "p50", "p99", "p99.9", "errors", "notif/acq", "wake/theory"} {
		if !strings.Contains(head, col) {
			t.Errorf("header lacks %s: %s", col, head)
		}
	}
	out := b.String()
	for _, want := range []string{"redis-pubsub  partition   12800  1234568", "32640/32640", "errors: no_quorum 9, timeout 99990",
		"! servers fired 33000 watches, clients received 32640 notifications"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// Columns line up: every row's p99 ends where the header's does.
	end := strings.Index(head, "p99 ") + len("p99")
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, " ") {
			continue // a note
		}
		if r := []rune(l); len(r) < end || r[end-1] == ' ' {
			t.Errorf("p99 column misaligned:\n%s\n%s", head, l)
		}
	}
}

// A burst's notes set lockbench's CPU beside the server's, in shares of
// one core over the cell, and name the busier side; other kinds, and
// cells without sandboxed servers, say nothing of it.
func TestBurstNotesSayWhichSideWasBusier(t *testing.T) {
	t.Parallel()
	// The notes read the cell's derived CPU shares: derive them after
	// every change, as a run does when it records a cell.
	burstCPU := func(c Cell) string { c.Derive(); return burstCPU(c) }
	notes := func(c Cell) []string { c.Derive(); return notes(c) }
	c := Cell{Impl: "zk-naive", Scenario: "burst", Kind: result.KindBurst, Clients: 2000,
		Generator: &result.Generator{CPUSeconds: 300, ServerCPUSeconds: map[string]float64{"127.0.0.1:2181": 150}, ServerSpanS: 200}}
	got := burstCPU(c)
	for _, want := range []string{"lockbench 150%", "server 127.0.0.1:2181 75%", "the busier side: lockbench"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if !strings.Contains(strings.Join(notes(c), "\n"), got) {
		t.Error("the note is not among the cell's notes")
	}
	c.Generator.ServerCPUSeconds["127.0.0.1:2181"] = 400
	if got := burstCPU(c); !strings.HasSuffix(got, "the busier side: server 127.0.0.1:2181") {
		t.Errorf("server busier: %q", got)
	}
	c.Kind = result.KindClosed
	if got := burstCPU(c); got != "" {
		t.Errorf("closed loop: %q", got)
	}
	// Together at 94% of a 2-core machine's cores: the cores were the
	// limit, said for any kind of cell, and the server at 82% of a core
	// is not called the limit on its own.
	c.Generator.Cores, c.Generator.CPUSeconds, c.Generator.ServerCPUSeconds["127.0.0.1:2181"] = 2, 210, 164
	got = strings.Join(notes(c), "\n")
	for _, want := range []string{"lockbench 105%", "server 127.0.0.1:2181 82%", "together 94% of the machine's 2 cores: the cores were the limit", "(the busier: lockbench)"} {
		if !strings.Contains(got, want) {
			t.Errorf("closed loop on busy cores: %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "the service may have been the limit") {
		t.Errorf("busy cores blamed on the service: %q", got)
	}
	// With a core to spare the server at 82% of one is the suspect.
	c.Generator.Cores = 4
	got = strings.Join(notes(c), "\n")
	if !strings.Contains(got, "127.0.0.1:2181 used 82% of a core, lockbench 105% — the service may have been the limit") || strings.Contains(got, "cores were the limit") {
		t.Errorf("closed loop with cores to spare: %q", got)
	}
	c.Generator.Cores, c.Generator.CPUSeconds, c.Generator.ServerCPUSeconds["127.0.0.1:2181"] = 0, 300, 400
	c.Kind, c.Generator.ServerSpanS = result.KindBurst, 0
	if got := burstCPU(c); got != "" {
		t.Errorf("no sandboxed servers: %q", got)
	}
	c.Generator.ServerSpanS = 0.0107 // a burst of a few clients: shares in 10 ms ticks are noise
	if got := burstCPU(c); got != "" {
		t.Errorf("a burst of 10.7ms: %q", got)
	}
}

// A shard's clients received their own notifications while the servers
// counted every shard's watches: that is no discrepancy, and is not
// flagged as one (merge compares the totals); an unsharded cell's is.
func TestShardNotesDoNotFlagGlobalServerCounters(t *testing.T) {
	t.Parallel()
	fired := int64(819)
	c := Cell{Impl: "zk-pred", Scenario: "hot", Kind: result.KindClosed, Clients: 4, Acquires: 400,
		ServerCounts: &result.ServerCounts{Watches: &fired, ClientNotifications: 409}}
	if n := strings.Join(notes(c), "\n"); !strings.Contains(n, "! servers fired 819 watches") {
		t.Errorf("an unsharded cell's mismatch is not flagged: %q", n)
	}
	if v := serverText(judge.ServerCount(c)); !strings.Contains(v, "✗") {
		t.Errorf("an unsharded cell's verdict: %q", v)
	}
	c.Shard = &result.CellShard{Index: 0, Count: 2, Clients: 2}
	if n := strings.Join(notes(c), "\n"); strings.Contains(n, "!") || !strings.Contains(n, "merge compares totals") {
		t.Errorf("a shard's notes: %q; want no warning, and that merge compares the totals", n)
	}
	if v := serverText(judge.ServerCount(c)); strings.Contains(v, "✗") {
		t.Errorf("a shard's verdict: %q", v)
	}
}
