package lockbench_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/dist"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/sandboxtest"
)

// Every load scenario runs against every implementation over real servers:
// it acquires, stays safe, and reports what the scenario is about.
func TestEveryScenarioOnEveryImplementation(t *testing.T) {
	if testing.Short() {
		t.Skip("drives every implementation over real servers")
	}
	keys, _ := dist.ParseKeys("zipf:1.5")
	hold, _ := dist.ParseDist("exp:500us")
	for _, name := range []string{"redis", "redlock", "redsync", "zk-naive", "zk-pred", "zk-ephemeral", "zk-lock"} {
		// One sandbox of the servers the driver needs serves its four
		// scenarios, each in a namespace of its own.
		d, _ := impl.Lookup(name)
		srv := sandboxtest.Start(t, d.Needs...)
		for _, sc := range []string{"hot", "keys", "rate", "burst"} {
			t.Run(name+"/"+sc, func(t *testing.T) {
				s, _ := lockbench.LookupScenario(sc)
				spec := lockbench.CellSpec{
					Impl: name, Scenario: s, Clients: 4, HoldDist: hold,
					ServerKinds: sandbox.Meter{},
					Config:      impl.Config{Servers: srv, Namespace: fmt.Sprintf("matrix-%s-%s", name, sc), Seed: 9},
				}
				switch sc {
				case "hot":
					spec.Duration = 400 * time.Millisecond
				case "keys":
					spec.Duration, spec.Locks, spec.Keys = 400*time.Millisecond, 16, keys
				case "rate":
					spec.Duration, spec.Rate, spec.Arrival = 500*time.Millisecond, 200, lockbench.ArrivalPoisson
				}
				cell, err := lockbench.RunCell(context.Background(), spec)
				if err != nil {
					t.Fatal(err)
				}
				if cell.Acquires == 0 || cell.SafetyViolations != 0 || cell.Errors != 0 {
					t.Fatalf("acquires %d, violations %d, errors %v", cell.Acquires, cell.SafetyViolations, cell.ErrorsByClass)
				}
				if cell.AcquireLatencyUs.P50 <= 0 || cell.RoundTrips == 0 || cell.Fairness == nil {
					t.Errorf("missing measurements: %+v", cell)
				}
				switch sc {
				case "burst":
					if cell.Acquires != 4 {
						t.Errorf("burst of 4 acquired %d times", cell.Acquires)
					}
				case "rate":
					if cell.Open == nil || cell.Open.Offered == 0 || cell.Open.ServiceLatencyUs.P50 <= 0 {
						t.Errorf("open loop not reported: %+v", cell.Open)
					}
				}
			})
		}
	}
}
