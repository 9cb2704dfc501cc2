package lockbench_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/sandboxtest"
)

// A burst's herd counts are exact, not timing-dependent: at hold 0, where
// a release could overtake a notification still on its way to a waiter,
// bursts of 64 in a row give exactly the theory's release wake-ups for
// every woken implementation, and the servers' watch triggers equal the
// clients' notifications. Four bursts each here; scripts/exact-bursts
// runs twenty ($LOCKBENCH_EXACT_BURSTS), minutes that CI does not spend.
func TestBurstCountsAreExactEveryTime(t *testing.T) {
	if testing.Short() {
		t.Skip("bursts of 64 for every woken implementation")
	}
	runs := 4
	if v := os.Getenv("LOCKBENCH_EXACT_BURSTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("LOCKBENCH_EXACT_BURSTS=%q: want a count of bursts", v)
		}
		runs = n
	}
	srv := allServers(t)
	burst, _ := lockbench.LookupScenario("burst")
	const n = 64
	// The rows that share no server run side by side, two groups at a
	// time (go test's -parallel on two cores): a PostgreSQL burst spends
	// most of its time waiting on the server's queue. Those that share one
	// run one after another, since a cell's server counters and its
	// settling read the whole server.
	var rows []impl.Driver
	for _, name := range impl.Names() {
		d, _ := impl.Lookup(name)
		if d.Theory != nil && len(d.Needs) > 0 {
			rows = append(rows, d)
		}
	}
	for _, group := range byServer(rows) {
		t.Run(group[0].Needs[0].Role, func(t *testing.T) {
			t.Parallel()
			for _, d := range group {
				exactBursts(t, d, srv, burst, n, runs)
			}
		})
	}
}

// burstOf64 is what a burst of 64 must count on each woken row, written
// out by hand from the row's design, not read from its declared theory:
// every waiter woken on every release, 64·63/2; its successor only, 63;
// a queue on the server, none. serverCounts says its servers count the
// watches they trigger (ZooKeeper's mntr, etcd's event total), which must
// then equal the clients' notifications — or, for a queue inside the
// server (etcd's Lock service), one per release to the server's own
// waiter.
var burstOf64 = map[string]struct {
	wakeups      int64
	serverCounts bool
}{
	"zk-naive": {2016, true}, "zk-ephemeral": {2016, true}, "redis-pubsub": {2016, false}, "redis-fenced": {2016, false},
	"zk-pred": {63, true}, "zk-lock": {63, true}, "etcd": {63, true}, "etcd-recipe": {63, true}, "redis-fair": {63, false},
	"mysql-getlock": {0, false}, "pg-advisory": {0, false}, "pg-xact": {0, false}, "etcd-lock": {0, true},
}

// exactBursts runs runs bursts of n clients of d and checks each one's
// counts against what the row's design predicts and its servers count.
func exactBursts(t *testing.T, d impl.Driver, srv impl.Servers, burst lockbench.Scenario, n, runs int) {
	t.Helper()
	want, ok := burstOf64[d.Name]
	if !ok || n != 64 {
		t.Fatalf("%s: no count written out for a burst of %d: add the row's to burstOf64", d.Name, n)
	}
	if th := d.Theory.BurstWakeups(n); th != want.wakeups {
		t.Errorf("%s: its declared theory says %d wake-ups for a burst of 64, its design %d", d.Name, th, want.wakeups)
	}
	for i := range runs {
		c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
			Impl: d.Name, Scenario: burst, Clients: n, ConnectParallel: 32,
			ServerKinds: sandbox.Meter{},
			Config:      impl.Config{Servers: srv, Namespace: fmt.Sprintf("exact-%s-%d", d.Name, i)},
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.Acquires != int64(n) || c.Errors != 0 || c.SafetyViolations != 0 {
			t.Errorf("%s run %d: %d acquisitions, errors %v, %d violations; want %d, none, none", d.Name, i, c.Acquires, c.ErrorsByClass, c.SafetyViolations, n)
		}
		if c.ReleaseWakeups != want.wakeups || c.Settle != "exact" {
			t.Errorf("%s run %d: %d release wake-ups (settle %s), want exactly %d", d.Name, i, c.ReleaseWakeups, c.Settle, want.wakeups)
		}
		got, ok := c.ServerCounts.Fired()
		if ok != want.serverCounts {
			t.Errorf("%s run %d: server's watch count present %v, want %v (counters %v)", d.Name, i, ok, want.serverCounts, c.Server)
		}
		// A queue inside the server (etcd's Lock service) wakes the
		// server's own waiter on each release, and no client.
		if want := c.ServerCounts.Received(); ok && c.Theory.OnServer() && (got != int64(n-1) || want != 0) {
			t.Errorf("%s run %d: server triggered %d watches for its own waiters, clients counted %d; want %d and 0", d.Name, i, got, want, n-1)
		} else if ok && !c.Theory.OnServer() && got != want {
			t.Errorf("%s run %d: server triggered %d watches, clients counted %d", d.Name, i, got, want)
		}
	}
}

// byServer splits rows into groups that share no server role with one
// another.
func byServer(rows []impl.Driver) [][]impl.Driver {
	var groups [][]impl.Driver
	for _, d := range rows {
		var merged []impl.Driver
		kept := groups[:0]
		for _, g := range groups {
			if sharesRole(g, d) {
				merged = append(merged, g...)
			} else {
				kept = append(kept, g)
			}
		}
		groups = append(kept, append(merged, d))
	}
	return groups
}

// sharesRole says whether d needs a server role a driver of group needs.
func sharesRole(group []impl.Driver, d impl.Driver) bool {
	for _, g := range group {
		for _, a := range g.Needs {
			for _, b := range d.Needs {
				if a.Role == b.Role {
					return true
				}
			}
		}
	}
	return false
}

// A repeated burst is one cell of several bursts: its counts are the
// repeats' sums — still exactly theory's, repeated — every repeat's server
// CPU per hand-off is kept, and its cost per hand-off is shared over every
// repeat's hand-offs.
func TestRepeatedBurstAddsUpExactly(t *testing.T) {
	d, _ := impl.Lookup("zk-naive")
	srv := sandboxtest.Start(t, d.Needs...)
	burst, _ := lockbench.LookupScenario("burst")
	const n, repeats = 8, 3
	c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
		Impl: "zk-naive", Scenario: burst, Clients: n, Repeat: repeats,
		ServerKinds: sandbox.Meter{},
		Config:      impl.Config{Servers: srv, Namespace: "repeated-burst"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := repeats * d.Theory.BurstWakeups(n)
	if c.Repeats != repeats || c.Acquires != repeats*n || c.ReleaseWakeups != want || c.TheoryWakeups == nil || *c.TheoryWakeups != want || c.Settle != "exact" {
		t.Fatalf("repeats %d, acquires %d, release wake-ups %d, theory %v, settle %q; want %d, %d, %d = theory, exact",
			c.Repeats, c.Acquires, c.ReleaseWakeups, c.TheoryWakeups, c.Settle, repeats, repeats*n, want)
	}
	if len(c.RepeatServerCPUUs) != repeats {
		t.Errorf("server CPU per hand-off of %d repeats, want %d", len(c.RepeatServerCPUUs), repeats)
	}
	h, ok := result.HandoffCosts(c)
	if !ok || h.Handoffs != repeats*(n-1) || h.Wakeups != float64(want)/float64(repeats*(n-1)) {
		t.Errorf("per hand-off: %+v", h)
	}
	if c.Fairness == nil || len(c.Fairness.PerClient) != n || c.Fairness.Starved != 0 {
		t.Errorf("fairness over the repeats: %+v", c.Fairness)
	}
}

// A repeated burst keeps the driver's own distributions, over every
// repeat's grants: Redlock's validity left at each grant, counted once a
// grant, not dropped when the repeats' cell is made.
func TestRepeatedBurstKeepsTheDriversDistributions(t *testing.T) {
	d, _ := impl.Lookup("redlock")
	srv := sandboxtest.Start(t, d.Needs...)
	burst, _ := lockbench.LookupScenario("burst")
	const n, repeats = 4, 3
	c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
		Impl: "redlock", Scenario: burst, Clients: n, Repeat: repeats,
		Config: impl.Config{Servers: srv, Namespace: "repeated-burst-dists"},
	})
	if err != nil {
		t.Fatal(err)
	}
	v, ok := c.Distributions["validity_ms"]
	if c.Repeats != repeats || !ok || v.Count != c.Acquires || c.Acquires != repeats*n || v.Max <= 0 {
		t.Errorf("repeats %d, acquires %d, distributions %+v; want validity_ms over all %d grants", c.Repeats, c.Acquires, c.Distributions, repeats*n)
	}
}
