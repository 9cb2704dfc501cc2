package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/scenarios"
)

const runSynopsis = `run [flags]

Runs every implementation × scenario × client count as one cell after
another, over the servers given or, by default, over a sandbox of real
servers it starts on loopback and stops at exit. Prints a table row per cell
and writes DIR/meta.json and DIR/summary.json (rewritten after every cell).

Examples:
  lockbench run --impl redis --clients 1,8 --duration 3s
  lockbench run --impl zk-naive,zk-pred --scenario burst --clients 8,32,128 --hold 5ms
  lockbench run --impl redis --locks 16 --clients 16 --acquires 100000   # uncontended
  lockbench run --impl redis,zk-pred --scenario keys --locks 100 --dist zipf:1.2 --clients 32
  lockbench run --impl redis,zk-pred --clients 64 --ramp 8:8:5s --hold 1ms   # 8, 16, … 64 clients
  lockbench run --impl zk-pred --scenario rate --rate 2000 --arrival poisson --clients 64 --hold exp:1ms
  lockbench run --impl zk-pred --zk 10.0.0.5:2181 --clients 64 --duration 30s

Exit status: 0 ok, 1 runtime failure, 2 usage, 3 a mutual-exclusion violation
(after all results are written), 130 interrupted (completed cells are kept).`

type runOpts struct {
	impls, scens, clients                 string
	locks                                 int
	duration, warmup                      time.Duration
	hold, think, dist, arrival, ramp      string
	rate                                  float64
	maxInflight                           int
	acquires                              int64
	ttl, retry, sessionTimeout, dial, max time.Duration
	jitter                                float64
	redis, redlock, zk                    string
	redlockMode                           string
	redlockTimeout                        time.Duration
	zkEnsemble, connectPar                int
	repeat                                int
	netDelay, netJitter, restartDelay     time.Duration
	out, slo                              string
	seed                                  uint64
	quiet                                 bool
}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o runOpts
	fs := newFlags("run", runSynopsis, stderr)
	fs.StringVar(&o.impls, "impl", "redis", "implementations, comma-separated (see `lockbench list`)")
	fs.StringVar(&o.scens, "scenario", "hot", "scenarios, comma-separated")
	fs.StringVar(&o.clients, "clients", "1,4,16", "client counts, comma-separated; each client has its own connection")
	fs.IntVar(&o.locks, "locks", 1, "number of lock names; client i uses lock i mod N (N ≥ clients: no contention)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time per cell")
	fs.Int64Var(&o.acquires, "acquires", 0, "measure this many acquisitions per cell instead of a duration")
	fs.StringVar(&o.ramp, "ramp", "", "staircase start:step:every up to the largest --clients over the same connections, e.g. 4:4:5s (a cell per stair)")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured warm-up per cell")
	fs.StringVar(&o.hold, "hold", "0s", "time each holder keeps the lock: 5ms, exp:5ms (exponential, mean) or uniform:1ms-10ms")
	fs.StringVar(&o.think, "think", "0s", "pause between release and the next acquire (same forms as --hold)")
	fs.StringVar(&o.dist, "dist", "uniform", "keys: how acquisitions pick among --locks names: uniform, zipf:S (S > 1) or hot:F/P")
	fs.Float64Var(&o.rate, "rate", 0, "rate: arrivals per second (open loop)")
	fs.StringVar(&o.arrival, "arrival", "constant", "rate: constant (evenly spaced) or poisson arrivals")
	fs.IntVar(&o.maxInflight, "max-inflight", 0, "rate: acquisitions in flight at most; later arrivals are dropped (default: --clients)")
	fs.DurationVar(&o.ttl, "ttl", impl.DefaultTTL, "lock TTL (Redis PX)")
	fs.DurationVar(&o.retry, "retry", impl.DefaultRetry, "pause between polling attempts")
	fs.Float64Var(&o.jitter, "jitter", impl.DefaultJitter, "random fraction of --retry added or removed")
	fs.StringVar(&o.redis, "redis", os.Getenv("LOCKBENCH_REDIS"), "Redis address for `redis` (default: sandbox; env LOCKBENCH_REDIS)")
	fs.StringVar(&o.redlock, "redlock", os.Getenv("LOCKBENCH_REDLOCK"), "Redlock masters, comma-separated (default: sandbox of 5; env LOCKBENCH_REDLOCK)")
	fs.StringVar(&o.redlockMode, "redlock-mode", "parallel", "Redlock: ask the masters in parallel, or sequential (in turn, as first described)")
	fs.DurationVar(&o.redlockTimeout, "redlock-timeout", 50*time.Millisecond, "Redlock: bound on each master's reply, far below --ttl")
	fs.StringVar(&o.zk, "zk", os.Getenv("LOCKBENCH_ZK"), "ZooKeeper servers, comma-separated (default: sandbox; env LOCKBENCH_ZK)")
	fs.IntVar(&o.zkEnsemble, "zk-ensemble", 1, "size of the sandboxed ZooKeeper: 1 standalone or 3 (quorum writes)")
	fs.DurationVar(&o.sessionTimeout, "zk-session-timeout", impl.DefaultSessionTimeout, "ZooKeeper session timeout")
	fs.IntVar(&o.repeat, "repeat", 1, "fault scenarios: times each cell repeats its script")
	fs.DurationVar(&o.netDelay, "net-delay", time.Millisecond, "latency/partition: delay the proxies add each way")
	fs.DurationVar(&o.netJitter, "net-jitter", 0, "latency/partition: random ± added to --net-delay")
	fs.DurationVar(&o.restartDelay, "redlock-restart-delay", 0, "restart: how long a restarted Redlock master stays out (the remedy: ≥ --ttl)")
	fs.DurationVar(&o.dial, "connect-timeout", impl.DefaultDialTimeout, "bound on connecting one client")
	fs.IntVar(&o.connectPar, "connect-parallel", lockbench.DefaultConnectParallel, "clients connecting at once before a cell")
	fs.DurationVar(&o.max, "max-cell-time", lockbench.DefaultMaxCellTime, "hard bound on one cell's time")
	fs.StringVar(&o.slo, "slo", "", "plan capacity: e.g. p99=10ms (p50, p90, p99, p999, max) — the largest client count per implementation that met it")
	fs.StringVar(&o.out, "out", "", "results directory (default results/<timestamp>)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed for every random choice: jitter, key choice, hold/think draws, arrivals (tokens are unique, never seeded)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress line")
	if err := parse(fs, args); err != nil {
		return err
	}
	plan, err := o.plan(fs.Changed("duration"))
	if err == nil && o.ramp != "" {
		switch {
		case fs.Changed("duration") || o.acquires > 0:
			err = fmt.Errorf("%w: --ramp sets each stair's length; drop --duration and --acquires", errUsage)
		default:
			var r lockbench.Ramp
			if r, err = lockbench.ParseRamp(o.ramp); err != nil {
				err = fmt.Errorf("%w: --ramp: %v", errUsage, err)
			} else {
				plan.Ramp = &r
			}
		}
	}
	if err != nil {
		return err
	}
	if plan.Out == "" {
		plan.Out = filepath.Join("results", time.Now().Format("20060102-150405"))
	}

	table := report.NewTable(stdout, herdColumns(plan.Impls))
	prog := newProgressLine(stderr, o.quiet)
	plan.OnServers = func(s impl.Servers, sandboxed []string) {
		if len(sandboxed) > 0 {
			fmt.Fprintf(stdout, "lockbench %s — sandbox: %s\n", lockbench.Version, describeServers(s, sandboxed))
		}
	}
	plan.OnProgress = prog.update
	plan.OnSkip = func(spec lockbench.CellSpec, err error) {
		prog.clear()
		fmt.Fprintf(stdout, "skipped %s/%s: %s\n", spec.Impl, spec.Scenario.Name,
			strings.TrimPrefix(oneLine(err.Error()), lockbench.ErrNotApplicable.Error()+": "))
	}
	plan.OnResult = func(c report.Cell) {
		prog.clear()
		table.Row(c)
	}
	sum, err := lockbench.Run(ctx, plan)
	prog.clear()
	if sum != nil && len(sum.Cells) > 0 {
		if sum.SLO != "" {
			slo, _ := report.ParseSLO(sum.SLO)
			fmt.Fprintf(stdout, "capacity at %s:\n", sum.SLO)
			for _, row := range sum.Capacity {
				fmt.Fprintf(stdout, "  %-10s %-8s %s\n", row.Impl, row.Scenario, row.Describe(slo))
			}
		}
		// Render what was measured, even when a later cell failed or the
		// run was interrupted; the data files are already written.
		if rerr := report.Render(plan.Out, report.RenderOptions{SLO: plan.SLO}); rerr != nil {
			fmt.Fprintf(stderr, "lockbench: report: %s\n", oneLine(rerr.Error()))
		} else {
			fmt.Fprintf(stdout, "report: %s\n", filepath.Join(plan.Out, "report.html"))
		}
		fmt.Fprintf(stdout, "results: %s\n", filepath.Join(plan.Out, "summary.json"))
		for _, c := range sum.Cells {
			if c.Server == nil && c.ServerNote != "" {
				fmt.Fprintf(stdout, "note: %s: no server counters: %s\n", c.Key(), oneLine(c.ServerNote))
			}
		}
	}
	if err != nil {
		return err
	}
	var unsafe []string
	for _, c := range sum.Cells {
		if c.SafetyViolations > 0 {
			unsafe = append(unsafe, fmt.Sprintf("%s (%d)", c.Key(), c.SafetyViolations))
		}
	}
	if len(unsafe) > 0 {
		return fmt.Errorf("%w in %s", errUnsafe, strings.Join(unsafe, ", "))
	}
	return nil
}

func (o runOpts) plan(durationSet bool) (lockbench.Plan, error) {
	var p lockbench.Plan
	p.Impls = splitList(o.impls)
	p.Scenarios = splitList(o.scens)
	for _, f := range splitList(o.clients) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return p, fmt.Errorf("%w: --clients: %q is not a positive whole number", errUsage, f)
		}
		p.Clients = append(p.Clients, n)
	}
	if len(p.Impls) == 0 || len(p.Scenarios) == 0 || len(p.Clients) == 0 {
		return p, fmt.Errorf("%w: --impl, --scenario and --clients need at least one value", errUsage)
	}
	switch {
	case o.acquires < 0:
		return p, fmt.Errorf("%w: --acquires must be positive, got %d", errUsage, o.acquires)
	case o.acquires > 0 && durationSet:
		return p, fmt.Errorf("%w: give --duration or --acquires, not both", errUsage)
	case o.acquires == 0 && o.duration <= 0:
		return p, fmt.Errorf("%w: --duration must be positive, got %v", errUsage, o.duration)
	case o.locks < 1:
		return p, fmt.Errorf("%w: --locks must be ≥ 1, got %d", errUsage, o.locks)
	case o.warmup < 0:
		return p, fmt.Errorf("%w: --warmup must not be negative", errUsage)
	case o.rate < 0 || o.maxInflight < 0:
		return p, fmt.Errorf("%w: --rate and --max-inflight must not be negative", errUsage)
	case o.arrival != lockbench.ArrivalConstant && o.arrival != lockbench.ArrivalPoisson:
		return p, fmt.Errorf("%w: --arrival must be constant or poisson, got %q", errUsage, o.arrival)
	case o.ttl <= 0 || o.retry <= 0 || o.sessionTimeout <= 0 || o.dial <= 0 || o.max <= 0:
		return p, fmt.Errorf("%w: --ttl, --retry, --zk-session-timeout, --connect-timeout and --max-cell-time must be positive", errUsage)
	case o.jitter < 0 || o.jitter > 1:
		return p, fmt.Errorf("%w: --jitter must be within 0 and 1, got %g", errUsage, o.jitter)
	case o.zkEnsemble != 1 && o.zkEnsemble < 3:
		return p, fmt.Errorf("%w: --zk-ensemble must be 1 or ≥ 3, got %d", errUsage, o.zkEnsemble)
	case o.redlockMode != "parallel" && o.redlockMode != "sequential":
		return p, fmt.Errorf("%w: --redlock-mode must be parallel or sequential, got %q", errUsage, o.redlockMode)
	case o.redlockTimeout <= 0:
		return p, fmt.Errorf("%w: --redlock-timeout must be positive", errUsage)
	case o.redlockTimeout >= o.ttl && slices.ContainsFunc(p.Impls, func(n string) bool { return strings.HasPrefix(n, "red") && n != "redis" }):
		return p, fmt.Errorf("%w: --redlock-timeout (%v) must be below --ttl (%v): a master's reply may not cost the whole validity", errUsage, o.redlockTimeout, o.ttl)
	case o.repeat < 1:
		return p, fmt.Errorf("%w: --repeat must be ≥ 1, got %d", errUsage, o.repeat)
	case o.netDelay < 0 || o.netJitter < 0 || o.restartDelay < 0:
		return p, fmt.Errorf("%w: --net-delay, --net-jitter and --redlock-restart-delay must not be negative", errUsage)
	case o.connectPar < 1:
		return p, fmt.Errorf("%w: --connect-parallel must be ≥ 1", errUsage)
	}
	for _, a := range append(append(splitList(o.redis), splitList(o.redlock)...), splitList(o.zk)...) {
		if !strings.Contains(a, ":") {
			return p, fmt.Errorf("%w: server address %q lacks a port (host:port)", errUsage, a)
		}
	}
	if rl := splitList(o.redlock); len(rl) > 0 && (len(rl) < 3 || len(rl)%2 == 0) {
		return p, fmt.Errorf("%w: --redlock needs an odd number ≥ 3 of masters, got %d", errUsage, len(rl))
	}
	hold, err := scenarios.ParseDist(o.hold)
	if err != nil {
		return p, fmt.Errorf("%w: --hold: %v", errUsage, err)
	}
	think, err := scenarios.ParseDist(o.think)
	if err != nil {
		return p, fmt.Errorf("%w: --think: %v", errUsage, err)
	}
	keys, err := scenarios.ParseKeys(o.dist)
	if err != nil {
		return p, fmt.Errorf("%w: --dist: %v", errUsage, err)
	}
	for _, sc := range p.Scenarios {
		if s, ok := scenarios.Lookup(sc); ok && s.Kind == scenarios.OpenLoop && o.rate <= 0 {
			return p, fmt.Errorf("%w: scenario %s needs --rate", errUsage, sc)
		}
	}
	p.Cell = lockbench.CellSpec{
		Locks: o.locks, Warmup: o.warmup, MaxTime: o.max, Repeat: o.repeat,
		Hold: hold.Mean(), Think: think.Mean(), HoldDist: hold, ThinkDist: think, Keys: keys,
		Rate: o.rate, Arrival: o.arrival, MaxInflight: o.maxInflight,
		ConnectParallel: o.connectPar,
		Config: impl.Config{
			Servers: impl.Servers{Redis: o.redis, Redlock: splitList(o.redlock), ZK: splitList(o.zk)},
			TTL:     o.ttl, Retry: o.retry, Jitter: o.jitter, SessionTimeout: o.sessionTimeout,
			DialTimeout: o.dial, Seed: o.seed,
			Options: map[string]string{
				"redlock-mode":          o.redlockMode,
				"redlock-timeout":       o.redlockTimeout.String(),
				"net-delay":             o.netDelay.String(),
				"net-jitter":            o.netJitter.String(),
				"redlock-restart-delay": o.restartDelay.String(),
			},
		},
	}
	if o.jitter == 0 {
		p.Cell.Config.Jitter = -1 // explicit zero: WithDefaults would restore 0.5
	}
	if o.acquires > 0 {
		p.Cell.Acquires = o.acquires
	} else {
		p.Cell.Duration = o.duration
	}
	if o.slo != "" {
		if _, err := report.ParseSLO(o.slo); err != nil {
			return p, fmt.Errorf("%w: --slo: %v", errUsage, err)
		}
	}
	p.SLO = o.slo
	p.ZKEnsemble = o.zkEnsemble
	p.Out = o.out
	return p, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func scenarioList() []scenarios.Scenario { return scenarios.All() }

func herdColumns(impls []string) bool {
	for _, n := range impls {
		if d, ok := impl.Lookup(n); ok && d.Herd != impl.Polling {
			return true
		}
	}
	return false
}

func describeServers(s impl.Servers, sandboxed []string) string {
	var parts []string
	for _, k := range sandboxed {
		switch k {
		case "redis":
			parts = append(parts, "redis "+s.Redis)
		case "redlock":
			parts = append(parts, fmt.Sprintf("redlock %d masters", len(s.Redlock)))
		case "zk":
			parts = append(parts, "zookeeper "+strings.Join(s.ZK, ","))
		}
	}
	return strings.Join(parts, ", ")
}

// progressLine shows one status line on stderr: redrawn each second on a
// terminal, a plain line every 10 s otherwise.
type progressLine struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	quiet bool
	last  time.Time
	shown bool
}

func newProgressLine(w io.Writer, quiet bool) *progressLine {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &progressLine{w: w, tty: tty, quiet: quiet}
}

func (p *progressLine) update(i, total int, spec lockbench.CellSpec, pr lockbench.Progress) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty && time.Since(p.last) < 10*time.Second {
		return
	}
	p.last = time.Now()
	of := ""
	if pr.Total > 0 {
		of = "/" + pr.Total.Round(time.Second).String()
	}
	msg := fmt.Sprintf("[%d/%d] %s %s clients=%d  %s%s  %.0f acq/s  p99≈%s  errors %d",
		i+1, total, spec.Impl, spec.Scenario.Name, spec.Clients, pr.Elapsed.Round(time.Second), of,
		pr.AcquiresPerS, report.Dur(pr.P99Us), pr.Errors)
	if pr.Warmup {
		msg = fmt.Sprintf("[%d/%d] %s %s clients=%d  warming up", i+1, total, spec.Impl, spec.Scenario.Name, spec.Clients)
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s", msg)
		p.shown = true
	} else {
		fmt.Fprintln(p.w, msg)
	}
}

func (p *progressLine) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}
