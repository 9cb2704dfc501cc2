package lockbench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/scenarios"
)

// Plan is a matrix of cells: every implementation × scenario × client
// count, run one cell at a time.
type Plan struct {
	Impls     []string
	Scenarios []string
	Clients   []int
	// Cell is the template for every cell (locks, duration, hold, config…);
	// its Impl, Scenario and Clients are set per cell.
	Cell CellSpec
	// ZKEnsemble is the size of a sandboxed ZooKeeper. Default 1.
	ZKEnsemble int
	// Ramp, if set, replaces the client counts: each implementation ×
	// scenario runs a staircase up to the largest of Clients.
	Ramp *Ramp
	// SLO, like "p99=10ms", plans capacity: summary.json and the report
	// name the largest client count per implementation that met it.
	SLO string
	// Out is the results directory; empty writes nothing.
	Out string

	// Optional observers, called from Run's goroutine except Progress.
	OnServers  func(s impl.Servers, sandboxed []string)
	OnCell     func(index, total int, spec CellSpec)
	OnProgress func(index, total int, spec CellSpec, p Progress)
	OnResult   func(c report.Cell)
	// OnSkip hears of cells skipped because their scenario does not apply
	// to their implementation.
	OnSkip func(spec CellSpec, err error)
}

// Meta is the content of meta.json: what was run, where and with what.
type Meta struct {
	Version        string            `json:"lockbench_version"`
	GoVersion      string            `json:"go_version"`
	Started        time.Time         `json:"started"`
	Host           map[string]string `json:"host"`
	Seed           uint64            `json:"seed"`
	Impls          []string          `json:"impls"`
	Scenarios      []string          `json:"scenarios"`
	Clients        []int             `json:"clients"`
	Locks          int               `json:"locks"`
	DurationS      float64           `json:"duration_s,omitempty"`
	Acquires       int64             `json:"acquires,omitempty"`
	WarmupS        float64           `json:"warmup_s"`
	HoldS          float64           `json:"hold_s"`
	ThinkS         float64           `json:"think_s"`
	Hold           string            `json:"hold"`  // the distribution, e.g. exp:5ms
	Think          string            `json:"think"` // the distribution
	Keys           string            `json:"keys,omitempty"`
	Rate           float64           `json:"rate,omitempty"`
	Arrival        string            `json:"arrival,omitempty"`
	MaxInflight    int               `json:"max_inflight,omitempty"`
	Repeat         int               `json:"repeat,omitempty"`
	ServerVersions map[string]string `json:"server_versions"`
	SLO            string            `json:"slo,omitempty"`
	TTLS           float64           `json:"ttl_s"`
	RetryS         float64           `json:"retry_s"`
	Options        map[string]string `json:"options,omitempty"`
	Servers        impl.Servers      `json:"servers"`
	Sandboxed      []string          `json:"sandboxed,omitempty"`
	ZKEnsemble     int               `json:"zk_ensemble,omitempty"`
}

// Run runs the plan. Servers not given in Plan.Cell.Config.Servers are
// started in a sandbox for the length of the run. summary.json is rewritten
// after every cell, so results of completed cells survive a later failure
// or an interrupt; the summary returned holds them too.
func Run(ctx context.Context, plan Plan) (*report.Summary, error) {
	sum := &report.Summary{Version: Version, Started: time.Now().UTC()}
	if err := plan.validate(); err != nil {
		return sum, err
	}
	servers, sandboxed, closeFleet, err := provision(ctx, plan)
	if err != nil {
		return sum, err
	}
	defer closeFleet()
	if plan.OnServers != nil {
		plan.OnServers(servers, sandboxed)
	}
	if plan.Out != "" {
		if err := os.MkdirAll(plan.Out, 0o755); err != nil {
			return sum, fmt.Errorf("lockbench: %w", err)
		}
		meta := plan.meta(sum.Started, servers, sandboxed)
		meta.ServerVersions = serverVersions(ctx, servers)
		meta.SLO = plan.SLO
		if err := report.WriteJSON(filepath.Join(plan.Out, report.MetaFile), meta); err != nil {
			return sum, err
		}
	}
	runID := randomID()
	clients := plan.Clients
	if plan.Ramp != nil {
		clients = []int{slices.Max(plan.Clients)}
	}
	total := 0
	for _, sc := range plan.Scenarios {
		if s, _ := scenarios.Lookup(sc); s.Kind == scenarios.Fault {
			total += len(plan.Impls)
		} else {
			total += len(plan.Impls) * len(clients)
		}
	}
	i := 0
	var slo *report.SLO
	if plan.SLO != "" {
		v, err := report.ParseSLO(plan.SLO)
		if err != nil {
			return sum, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		slo, sum.SLO = &v, v.String()
	}
	keep := func(res Result) error {
		sum.Cells = append(sum.Cells, res.Cell)
		if slo != nil {
			sum.Capacity = report.Capacity(sum.Cells, *slo)
		}
		if plan.Out != "" {
			if err := WriteIntervalLog(plan.Out, res); err != nil {
				return err
			}
			if err := report.WriteJSON(filepath.Join(plan.Out, report.SummaryFile), sum); err != nil {
				return err
			}
		}
		if plan.OnResult != nil {
			plan.OnResult(res.Cell)
		}
		return nil
	}
	var skipped []string
	for _, name := range plan.Impls {
		for _, sc := range plan.Scenarios {
			cs := clients
			if s, _ := scenarios.Lookup(sc); s.Kind == scenarios.Fault {
				// A fault script has its own cast — a holder and waiters —
				// and repeats; sweeping client counts would only multiply
				// its minutes. It runs once, with the first count (≥ 2).
				cs = []int{max(plan.Clients[0], 2)}
			}
			for _, n := range cs {
				spec := plan.Cell
				spec.Impl, spec.Clients = name, n
				spec.Scenario, _ = scenarios.Lookup(sc)
				spec.Config.Servers = servers
				spec.Config.Namespace = fmt.Sprintf("%s-%d", runID, i)
				idx := i
				if plan.OnProgress != nil {
					spec.Progress = func(p Progress) { plan.OnProgress(idx, total, spec, p) }
				}
				if plan.OnCell != nil {
					plan.OnCell(idx, total, spec)
				}
				i++
				if plan.Ramp != nil {
					stairs, err := RunRamp(ctx, spec, *plan.Ramp)
					for _, res := range stairs {
						if err := keep(res); err != nil {
							return sum, err
						}
					}
					if err != nil {
						return sum, err
					}
					continue
				}
				res, err := RunCellDetail(ctx, spec)
				if errors.Is(err, ErrNotApplicable) {
					skipped = append(skipped, strings.TrimPrefix(err.Error(), ErrNotApplicable.Error()+": "))
					if plan.OnSkip != nil {
						plan.OnSkip(spec, err)
					}
					continue
				}
				if err != nil {
					return sum, err
				}
				if err := keep(res); err != nil {
					return sum, err
				}
			}
		}
	}
	if len(sum.Cells) == 0 && len(skipped) > 0 {
		return sum, fmt.Errorf("%w: no cell applies: %s", ErrUsage, skipped[0])
	}
	return sum, nil
}

func (p *Plan) validate() error {
	if len(p.Impls) == 0 || len(p.Scenarios) == 0 || len(p.Clients) == 0 {
		return fmt.Errorf("%w: need at least one implementation, scenario and client count", ErrUsage)
	}
	for _, n := range p.Impls {
		if _, ok := impl.Lookup(n); !ok {
			return fmt.Errorf("%w: unknown implementation %q (known: %v)", ErrUsage, n, impl.Names())
		}
	}
	for _, s := range p.Scenarios {
		if _, ok := scenarios.Lookup(s); !ok {
			return fmt.Errorf("%w: unknown scenario %q (known: %v)", ErrUsage, s, scenarios.Names())
		}
	}
	for _, n := range p.Clients {
		if n < 1 {
			return fmt.Errorf("%w: client counts must be ≥ 1, got %d", ErrUsage, n)
		}
	}
	spec := p.Cell
	spec.Impl, spec.Clients = p.Impls[0], p.Clients[0]
	for _, s := range p.Scenarios {
		spec.Scenario, _ = scenarios.Lookup(s)
		if err := spec.validate(); err != nil {
			return err
		}
	}
	if p.ZKEnsemble <= 0 {
		p.ZKEnsemble = 1
	}
	if p.Ramp != nil {
		for _, sc := range p.Scenarios {
			if s, _ := scenarios.Lookup(sc); s.Kind != scenarios.ClosedLoop && s.Kind != scenarios.OpenLoop {
				return fmt.Errorf("%w: --ramp needs closed- or open-loop scenarios, not %s", ErrUsage, sc)
			}
		}
		if top := slices.Max(p.Clients); p.Ramp.Start > top {
			return fmt.Errorf("%w: the ramp starts at %d clients, above --clients %d", ErrUsage, p.Ramp.Start, top)
		}
	}
	return nil
}

// provision fills in the servers the plan's implementations need and were
// not given, from a sandbox.
func provision(ctx context.Context, p Plan) (impl.Servers, []string, func(), error) {
	s := p.Cell.Config.Servers
	var needRedis, needZK bool
	needRedlock := 0
	for _, n := range p.Impls {
		d, _ := impl.Lookup(n)
		needRedis = needRedis || (d.Needs.Redis && s.Redis == "")
		if len(s.Redlock) == 0 {
			needRedlock = max(needRedlock, d.Needs.Redlock)
		}
		needZK = needZK || (d.Needs.ZK && len(s.ZK) == 0)
	}
	spec := sandbox.Spec{Redis: needRedlock}
	if needRedis {
		spec.Redis = max(spec.Redis, 1)
	}
	if needZK {
		spec.ZK = p.ZKEnsemble
	}
	if spec.Redis == 0 && spec.ZK == 0 {
		return s, nil, func() {}, nil
	}
	f, err := sandbox.Start(ctx, spec)
	if err != nil {
		return s, nil, func() {}, err
	}
	var sandboxed []string
	if needRedis {
		s.Redis = f.Redis[0].Addr
		sandboxed = append(sandboxed, "redis")
	}
	if needRedlock > 0 {
		s.Redlock = f.RedisAddrs()
		sandboxed = append(sandboxed, "redlock")
	}
	if needZK {
		s.ZK = f.ZKAddrs()
		sandboxed = append(sandboxed, "zk")
	}
	return s, sandboxed, func() { f.Close() }, nil
}

func (p Plan) meta(started time.Time, s impl.Servers, sandboxed []string) Meta {
	c := p.Cell.Config.WithDefaults()
	hold, think := p.Cell.HoldDist, p.Cell.ThinkDist
	if hold.IsZero() {
		hold = scenarios.Fixed(p.Cell.Hold)
	}
	if think.IsZero() {
		think = scenarios.Fixed(p.Cell.Think)
	}
	return Meta{
		Version: Version, GoVersion: runtime.Version(), Started: started, Host: hostFacts(),
		Hold: hold.String(), Think: think.String(), Keys: p.Cell.Keys.String(), Rate: p.Cell.Rate,
		Arrival: p.Cell.Arrival, MaxInflight: p.Cell.MaxInflight, Repeat: p.Cell.Repeat,
		Seed: c.Seed, Impls: p.Impls, Scenarios: p.Scenarios, Clients: slices.Clone(p.Clients),
		Locks: max(p.Cell.Locks, 1), DurationS: p.Cell.Duration.Seconds(), Acquires: p.Cell.Acquires,
		WarmupS: p.Cell.Warmup.Seconds(), HoldS: p.Cell.Hold.Seconds(), ThinkS: p.Cell.Think.Seconds(),
		TTLS: c.TTL.Seconds(), RetryS: c.Retry.Seconds(), Options: c.Options,
		Servers: s, Sandboxed: sandboxed, ZKEnsemble: p.ZKEnsemble,
	}
}

func randomID() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
