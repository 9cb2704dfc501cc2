package lockbench_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
)

// A burst's herd counts are exact, not timing-dependent: at hold 0, where
// a release could overtake a notification still on its way to a waiter,
// twenty bursts of 64 in a row give exactly the theory's release wake-ups
// for every woken implementation, and the servers' watch triggers equal the
// clients' notifications.
func TestBurstCountsAreExactEveryTime(t *testing.T) {
	if testing.Short() {
		t.Skip("twenty bursts")
	}
	srv := allServers(t)
	burst, _ := lockbench.LookupScenario("burst")
	const n, runs = 64, 20
	for _, name := range impl.Names() {
		d, _ := impl.Lookup(name)
		if d.Theory == nil || len(d.Needs) == 0 {
			continue
		}
		want := d.Theory.BurstWakeups(n)
		for i := range runs {
			c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
				Impl: name, Scenario: burst, Clients: n, ConnectParallel: 32,
				Config: impl.Config{Servers: srv, Namespace: fmt.Sprintf("exact-%s-%d", name, i)},
			})
			if err != nil {
				t.Fatal(err)
			}
			if c.ReleaseWakeups != want || c.Settle != "exact" {
				t.Errorf("%s run %d: %d release wake-ups (settle %s), want exactly %d", name, i, c.ReleaseWakeups, c.Settle, want)
			}
			if got, ok := c.Server["watch_triggered"]; ok && got != c.Server["client_notifications"] {
				t.Errorf("%s run %d: server triggered %d watches, clients counted %d", name, i, got, c.Server["client_notifications"])
			}
		}
	}
}
