package report

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

// A run that measured a known issue's scenario lists the issue, its
// public reports and its command, with every lock's figure; a run that
// measured none has no such section.
func TestKnownIssuesSection(t *testing.T) {
	t.Parallel()
	wait := Cell{Impl: "redis", Scenario: "wait", Clients: 9, Counts: result.Counts{RoundTrips: 7200}, Wait: &result.WaitFigures{Waiters: 8, WaitS: 10},
		Generator: &result.Generator{CPUSeconds: 0.04}}
	pause := Cell{Impl: "zk-pred", Scenario: "pause", Clients: 2, Kind: result.KindFault,
		Faults: &result.Faults{Repeats: 3, Bound: result.BoundSession, ConfiguredMs: 2000, RecoveryMs: &result.Spread{P50: 2100, Max: 2200},
			Pause: &result.PauseFigures{StaleWrites: 3, UnfencedAccepted: 3, LockFences: true}, StaleWritesRejected: 3}}
	hot := Cell{Impl: "redis", Scenario: "hot", Clients: 8, Acquires: 100}
	md := string(markdown(result.Meta{}, []Cell{hot, wait, pause}, nil, nil))
	for _, want := range []string{
		"### Known issues, measured",
		"**Waiting is not free** (scenario wait; reported in [rueidis#602](https://github.com/redis/rueidis/issues/602), [redsync#102](https://github.com/go-redsync/redsync/issues/102))",
		"- redis, 9 clients: per waiter and second of waiting (8 waiters): lockbench's CPU 500µs, 90.00 requests, 0.00 notifications",
		"**A paused holder writes after its lease is gone** (scenario pause; reported in [Kleppmann",
		"- zk-pred, 2 clients: zk-pred: a holder stalled past its session timeout lost the lock",
		"Reproduce: `lockbench run --scenario pause --clients 2 --guard",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md[strings.Index(md, "### Known"):])
		}
	}
	if strings.Contains(md, "dead waiter") || strings.Contains(md, "crashed holder") {
		t.Error("issues this run did not measure are listed")
	}
	if md := string(markdown(result.Meta{}, []Cell{hot}, nil, nil)); strings.Contains(md, "Known issues") {
		t.Error("a run without a known issue's scenario has the section")
	}
}
