package plan

import (
	"errors"
	"github.com/lockbench/lockbench/engine"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/impl"
	_ "github.com/lockbench/lockbench/impl/all"
)

// A plan that needs more connections than the process may open is refused
// before anything connects, with the limit to ask for.
func TestPlanRefusesMoreClientsThanFiles(t *testing.T) {
	p := resolved(t, Plan{Impls: []string{"redis"}, Scenarios: []string{"hot"}, Clients: []int{1, 2000}})
	if err := p.checkFiles(1024); !errors.Is(err, engine.ErrUsage) || !strings.Contains(err.Error(), "ulimit -n 2256") {
		t.Errorf("2000 clients under 1024 files: %v; want a usage error asking for ulimit -n 2256", err)
	}
	if err := p.checkFiles(4096); err != nil {
		t.Errorf("2000 clients under 4096 files: %v", err)
	}
	// A client of a driver on five masters holds five connections.
	var d impl.Driver
	for _, n := range impl.Names() {
		if x, _ := impl.Lookup(n); x.Caps.Has(impl.Quorum) {
			d = x
		}
	}
	p = resolved(t, Plan{Impls: []string{d.Name}, Scenarios: []string{"hot"}, Clients: []int{500}})
	if err := p.checkFiles(2000); err == nil {
		t.Errorf("500 clients of %s on %d masters fit under 2000 files", d.Name, d.Needs[0].Count)
	}
	// An open-loop client also holds its alarm.
	p = resolved(t, Plan{Impls: []string{"redis"}, Scenarios: []string{"hot", "rate"}, Clients: []int{2000}})
	if err := p.checkFiles(4096); !errors.Is(err, engine.ErrUsage) || !strings.Contains(err.Error(), "ulimit -n 4256") {
		t.Errorf("2000 open-loop clients under 4096 files: %v; want a usage error asking for ulimit -n 4256", err)
	}
}

// resolved is p with its names resolved, as Validate's first step leaves it.
func resolved(t *testing.T, p Plan) Plan {
	t.Helper()
	if err := p.checkLists(); err != nil {
		t.Fatal(err)
	}
	return p
}

// --guard is on in the fault scenarios and off in the load ones unless
// given; given, it is refused with a ramp and where no planned lock's
// servers keep a register, and kept where one does.
func TestGuardDefaultsAndRefusals(t *testing.T) {
	on, off := true, false
	p := resolved(t, Plan{Impls: []string{"redis"}, Scenarios: []string{"hot", "pause"}, Clients: []int{2}})
	for _, c := range p.cells() {
		if want := c.spec.Scenario.Name() == "pause"; c.spec.Guard != want {
			t.Errorf("%s: guard %v by default, want %v", c.spec.Scenario.Name(), c.spec.Guard, want)
		}
	}
	p.Guard = &off
	for _, c := range p.cells() {
		if c.spec.Guard {
			t.Errorf("%s: guarded with --guard=false", c.spec.Scenario.Name())
		}
	}
	p.Guard = &on
	if err := p.checkGuard(); err != nil {
		t.Errorf("--guard with redis: %v", err)
	}
	for _, c := range p.cells() {
		if !c.spec.Guard {
			t.Errorf("%s: unguarded with --guard", c.spec.Scenario.Name())
		}
	}
	p.Ramp = &engine.Ramp{}
	if err := p.checkGuard(); !errors.Is(err, engine.ErrUsage) || !strings.Contains(err.Error(), "--ramp") {
		t.Errorf("--guard with --ramp: %v, want a usage error naming --ramp", err)
	}
	p = resolved(t, Plan{Impls: []string{"inproc"}, Scenarios: []string{"hot"}, Clients: []int{2}, Guard: &on})
	if err := p.checkGuard(); !errors.Is(err, engine.ErrUsage) || !strings.Contains(err.Error(), "no guarded register") {
		t.Errorf("--guard with inproc: %v, want a usage error", err)
	}
}
