package lockbench_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/dist"
	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redlock"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/result"
)

// matrixLeftOut are the implementations the matrix does not run, each with
// why: every other registered one runs, so that a new row is covered or
// named here.
var matrixLeftOut = map[string]string{
	"inproc": "no server: the engine's and the scenarios' own tests run it",
}

// matrixBounds are option values, beyond a driver's Short, that let a
// row's bound on a server's reply outlast a starved machine: with two
// cores shared by every sandbox and four tests at once, a Redlock master
// took more than the default 50 ms to answer a burst, and the cell read
// no quorum where the test is about the scenario, not the bound.
var matrixBounds = map[string]map[string]string{
	"redlock": {redlock.OptTimeout: "1s"},
}

// Every load scenario runs against every implementation over real servers:
// it acquires, stays safe, and reports what the scenario is about. Both
// lists come from the registries: a registered load scenario without a case
// here fails the test.
func TestEveryScenarioOnEveryImplementation(t *testing.T) {
	if testing.Short() {
		t.Skip("drives every implementation over real servers")
	}
	keys, _ := dist.ParseKeys("zipf:1.5")
	hold, _ := dist.ParseDist("exp:500us")
	var loads []engine.Scenario
	for _, s := range engine.Scenarios() {
		if s.Kind() != result.KindFault {
			loads = append(loads, s)
		}
	}
	// One sandbox of every kind serves every driver, each cell in a
	// namespace of its own.
	srv := allServers(t)
	for _, name := range impl.Names() {
		if why, out := matrixLeftOut[name]; out || strings.HasPrefix(name, "test-") {
			t.Logf("%s left out: %s", name, why)
			continue
		}
		d, _ := impl.Lookup(name)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, s := range loads {
				t.Run(s.Name(), func(t *testing.T) { matrixCell(t, d, s, srv, keys, hold) })
			}
		})
	}
}

// matrixOptions are d's Short option values with its matrixBounds.
func matrixOptions(d impl.Driver) map[string]string {
	bounds := matrixBounds[d.Name]
	if len(bounds) == 0 {
		return d.Short
	}
	opts := make(map[string]string, len(d.Short)+len(bounds))
	maps.Copy(opts, d.Short)
	maps.Copy(opts, bounds)
	return opts
}

// matrixCell runs one implementation × scenario cell and checks what the
// scenario is about.
func matrixCell(t *testing.T, d impl.Driver, s engine.Scenario, srv impl.Servers, keys dist.Keys, hold dist.Dist) {
	spec := lockbench.CellSpec{
		Impl: d.Name, Scenario: s, Clients: 4, HoldDist: hold, ServerKinds: sandbox.Meter{}, MaxTime: time.Minute,
		// The driver's Short clock: a Lease row at client-go's defaults
		// polls every 2 s.
		Config: impl.Config{Servers: srv, Namespace: fmt.Sprintf("matrix-%s-%s", d.Name, s.Name()), Seed: 9, Options: matrixOptions(d)},
	}
	switch s.Name() {
	case "hot":
		spec.Duration = 400 * time.Millisecond
	case "keys":
		spec.Duration, spec.Locks, spec.Keys = 400*time.Millisecond, 16, keys
	case "rate":
		spec.Duration, spec.Rate, spec.Arrival = 500*time.Millisecond, 200, lockbench.ArrivalPoisson
	case "burst":
	case "abandon":
		spec.Clients = 5 // clients 1 and 3 leave; 0, 2 and 4 are granted
	case "wait":
		spec.Duration = 300 * time.Millisecond
	default:
		t.Fatalf("load scenario %s has no case in the matrix: add one", s.Name())
	}
	cell, err := lockbench.RunCell(context.Background(), spec)
	if errors.Is(err, lockbench.ErrNotApplicable) {
		t.Logf("not applicable, as the scenario says: %v", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if cell.Acquires == 0 || cell.SafetyViolations != 0 || cell.Errors != 0 {
		t.Fatalf("acquires %d, violations %d, errors %v", cell.Acquires, cell.SafetyViolations, cell.ErrorsByClass)
	}
	if cell.AcquireLatencyUs.P50 <= 0 || cell.RoundTrips == 0 || cell.Fairness == nil {
		t.Errorf("missing measurements: %+v", cell)
	}
	switch s.Name() {
	case "burst":
		if cell.Acquires != 4 {
			t.Errorf("burst of 4 acquired %d times", cell.Acquires)
		}
	case "rate":
		if cell.Open == nil || cell.Open.Offered == 0 || cell.Open.ServiceLatencyUs.P50 <= 0 {
			t.Errorf("open loop not reported: %+v", cell.Open)
		}
	case "abandon":
		if cell.Acquires != 3 || cell.Abandon == nil {
			t.Errorf("abandon of 5: %d acquisitions, figures %+v; want 3 granted and the leavers' figures", cell.Acquires, cell.Abandon)
		}
	case "wait":
		if w := cell.Wait; w == nil || w.Waiters != 3 || w.Granted != 0 || cell.Acquires != 1 {
			t.Errorf("wait: %d acquisitions, figures %+v; want the holder's one and 3 waiters never granted", cell.Acquires, cell.Wait)
		}
	}
}
