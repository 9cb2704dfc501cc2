package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/result"
	_ "github.com/lockbench/lockbench/scenarios" // the load scenarios
)

// Validate checks the whole plan before any server is touched — every
// list, every number, every implementation × scenario combination, the
// drivers' and scenarios' own options, the server addresses given — and
// fills in defaults. Its error wraps ErrUsage and names what to change.
// The CLI only parses; this is the one place a plan is judged.
func (p *Plan) Validate() error {
	if p.Cell.ServerKinds == nil {
		p.Cell.ServerKinds = sandbox.Meter{}
	}
	if err := p.checkLists(); err != nil {
		return err
	}
	if err := p.checkTemplate(); err != nil {
		return err
	}
	if err := p.checkServers(); err != nil {
		return err
	}
	if err := p.checkSizes(); err != nil {
		return err
	}
	// Every option given is checked, whether or not the plan's drivers
	// and scenarios read it: a typo in an unused one is still a typo.
	if err := impl.CheckOptions(append(impl.Options(), engine.ScenarioOptions()...), p.Cell.Config.Options); err != nil {
		return fmt.Errorf("%w: %v", engine.ErrUsage, err)
	}
	if p.SLO != "" {
		if _, err := result.ParseSLO(p.SLO); err != nil {
			return fmt.Errorf("%w: --slo: %v", engine.ErrUsage, err)
		}
	}
	if err := p.checkCells(); err != nil {
		return err
	}
	if err := p.checkGuard(); err != nil {
		return err
	}
	if err := p.checkFiles(fdLimit()); err != nil {
		return err
	}
	if err := p.checkSharding(); err != nil {
		return err
	}
	if err := p.checkRounds(); err != nil {
		return err
	}
	return p.checkRamp()
}

// checkCells validates every cell of the plan. One that does not
// apply (--renew with a lock that cannot renew, a fault the lock cannot be
// staged for) is skipped when the run is; a plan of which none applies is
// refused here, before a server starts or a file is written.
func (p *Plan) checkCells() error {
	var skipped []string
	applies := false
	cells := p.cells()
	// The reasons in the order asked, not the order run.
	slices.SortFunc(cells, func(a, b plannedCell) int { return a.canon - b.canon })
	for _, c := range cells {
		err := c.spec.Validate()
		switch {
		case errors.Is(err, engine.ErrNotApplicable):
			if why := strings.TrimPrefix(err.Error(), engine.ErrNotApplicable.Error()+": "); !slices.Contains(skipped, why) {
				skipped = append(skipped, why)
			}
		case err != nil:
			return err
		default:
			applies = true // Run skips the others, with a note each
		}
	}
	if !applies {
		return fmt.Errorf("%w: no cell of the plan applies: %s", engine.ErrUsage, strings.Join(skipped, "; "))
	}
	return nil
}

// fdReserve is the file descriptors kept for everything but the clients:
// results, server probes, the sandbox's pipes.
const fdReserve = 256

// checkFiles refuses, before anything connects, a plan whose clients need
// more connections than the process may open (limit; 0 if unknown).
func (p *Plan) checkFiles(limit int) error {
	if limit <= 0 {
		return nil
	}
	top := slices.Max(p.Clients)
	alarm := 0 // an open-loop client waits for its arrivals on a file of its own
	for _, s := range p.scenarios {
		if s.Kind() == result.KindOpen {
			alarm = 1
		}
	}
	for _, d := range p.drivers {
		name := d.Name
		conns := max(d.ConnsPerClient(func(kind string) bool { k, _ := sandbox.LookupKind(kind); return k.Ensemble }), 1) + alarm
		if top > (limit-fdReserve)/conns {
			need := min(top, 1<<40) * conns // bounded: never overflows
			return fmt.Errorf("%w: %d clients of %s need about %d connections, and this process may open %d files: "+
				"raise the limit (ulimit -n %d) or use fewer clients", engine.ErrUsage, top, name, need, limit, need+fdReserve)
		}
	}
	return nil
}

// checkLists refuses empty, unknown and repeated names and counts: a
// repeated cell would overwrite its twin's files.
func (p *Plan) checkLists() error {
	if len(p.Impls) == 0 || len(p.Scenarios) == 0 || len(p.Clients) == 0 {
		return fmt.Errorf("%w: need at least one implementation, scenario and client count", engine.ErrUsage)
	}
	p.drivers, p.scenarios = nil, nil
	for i, n := range p.Impls {
		d, ok := impl.Lookup(n)
		if !ok {
			return fmt.Errorf("%w: unknown implementation %q (known: %s)", engine.ErrUsage, n, strings.Join(impl.Names(), ", "))
		}
		// Resolved once, under the plan's options: the servers the sandbox
		// starts and the cells connect to are the topology's chosen.
		p.drivers = append(p.drivers, d.For(p.Cell.Config))
		if slices.Contains(p.Impls[:i], n) {
			return fmt.Errorf("%w: --impl names %s twice", engine.ErrUsage, n)
		}
	}
	for i, s := range p.Scenarios {
		sc, ok := engine.LookupScenario(s)
		if !ok {
			return fmt.Errorf("%w: unknown scenario %q (known: %s)", engine.ErrUsage, s, strings.Join(engine.ScenarioNames(), ", "))
		}
		p.scenarios = append(p.scenarios, sc)
		if slices.Contains(p.Scenarios[:i], s) {
			return fmt.Errorf("%w: --scenario names %s twice", engine.ErrUsage, s)
		}
	}
	for i, n := range p.Clients {
		if n < 1 {
			return fmt.Errorf("%w: --clients: counts must be ≥ 1, got %d", engine.ErrUsage, n)
		}
		if slices.Contains(p.Clients[:i], n) {
			return fmt.Errorf("%w: --clients names %d twice", engine.ErrUsage, n)
		}
	}
	return nil
}

// checkTemplate refuses settings of the plan's template cell that no run
// can use: the engine's one judgement of a cell's numbers, for a stated
// spec, and a duration where the plan measures neither acquisitions nor a
// ramp.
func (p *Plan) checkTemplate() error {
	c := p.Cell
	if c.Duration == 0 && c.Acquires == 0 && p.Ramp == nil {
		return fmt.Errorf("%w: --duration must be a positive duration, got %v", engine.ErrUsage, c.Duration)
	}
	return c.Check(true)
}

// checkServers checks the addresses given for every role: host:port
// each, or a connection string where the role takes one, and what the
// role's need says of them (an odd number of masters).
func (p *Plan) checkServers() error {
	for _, n := range impl.Roles() {
		addrs := p.Cell.Config.Servers[n.Role]
		for _, a := range addrs {
			if err := n.CheckAddr(a); err != nil {
				return fmt.Errorf("%w: --%s: %v", engine.ErrUsage, n.Role, err)
			}
		}
		if len(addrs) > 0 && n.Check != nil {
			if err := n.Check(addrs); err != nil {
				return fmt.Errorf("%w: --%s: %v", engine.ErrUsage, n.Role, err)
			}
		}
	}
	return nil
}

// checkSizes checks the sandbox sizes of ensemble kinds: 1, or an odd
// number ≥ 3 that can form a majority.
func (p *Plan) checkSizes() error {
	for kind, n := range p.Sizes {
		k, ok := sandbox.LookupKind(kind)
		if !ok || !k.Ensemble {
			return fmt.Errorf("%w: no ensemble server kind %q", engine.ErrUsage, kind)
		}
		if k.CheckSize != nil {
			if err := k.CheckSize(n); err != nil {
				return fmt.Errorf("%w: --%s %v", engine.ErrUsage, k.SizeFlag, err)
			}
			continue
		}
		if n != 1 && (n < 3 || n%2 == 0) {
			return fmt.Errorf("%w: --%s must be 1 or an odd number ≥ 3, got %d", engine.ErrUsage, k.SizeFlag, n)
		}
	}
	return nil
}

func (p *Plan) checkRamp() error {
	if p.Ramp == nil {
		return nil
	}
	for _, s := range p.scenarios {
		if s.Kind() != result.KindClosed && s.Kind() != result.KindOpen {
			return fmt.Errorf("%w: --ramp needs closed- or open-loop scenarios, not %s", engine.ErrUsage, s.Name())
		}
	}
	if top := slices.Max(p.Clients); p.Ramp.Start > top {
		return fmt.Errorf("%w: the ramp starts at %d clients, above --clients %d", engine.ErrUsage, p.Ramp.Start, top)
	}
	return nil
}

// needs lists the server roles of the plan's drivers, each once with the
// largest count asked.
func (p *Plan) needs() []impl.Need {
	var out []impl.Need
	for _, d := range p.drivers {
		for _, n := range d.Needs {
			i := slices.IndexFunc(out, func(o impl.Need) bool { return o.Role == n.Role })
			switch {
			case i < 0:
				out = append(out, n)
			case n.Count > out[i].Count:
				out[i].Count = n.Count
			}
		}
	}
	return out
}

// checkGuard refuses --guard where no cell could keep it: a ramp, whose
// stairs share connections the register would have to outlive, or
// implementations none of whose servers keep a register. A plan where
// some do runs the others unguarded, each saying so.
func (p *Plan) checkGuard() error {
	if p.Guard == nil || !*p.Guard {
		return nil
	}
	if p.Ramp != nil {
		return fmt.Errorf("%w: --guard does not apply to --ramp; guard the cells at each client count instead", engine.ErrUsage)
	}
	for _, d := range p.drivers {
		if open, _, _ := engine.GuardOpener(p.Cell, d); open != nil {
			return nil
		}
	}
	return fmt.Errorf("%w: --guard: %s keep no guarded register (a lock's servers keep one, or an unsharded run keeps one in its memory)", engine.ErrUsage, strings.Join(p.Impls, ", "))
}
