package plan

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/dist"
	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/rendezvous"
)

// Flags are a plan as a command line states it: what to run
// (implementations, scenarios, client counts), each cell's shape, the
// servers, the registered drivers' and scenarios' own options, the SLO,
// the results directory and sharding. Register adds them to a flag set,
// with their defaults and the LOCKBENCH_… variables they read; Plan reads
// them back. The command adds only what is its own (output format,
// profiles, the metrics endpoint).
type Flags struct {
	impls, scens, clients            string
	locks                            int
	duration, warmup                 time.Duration
	hold, think, dist, arrival, ramp string
	rate                             float64
	rateText                         string
	maxInflight                      int
	acquires                         int64
	ttl, retry, sessionTimeout, dial time.Duration
	max                              time.Duration
	jitter                           float64
	connectPar, repeat               int
	out, slo                         string
	seed                             uint64
	renew, guard, history            bool
	acquireTimeout                   time.Duration
	shard, startAt, runID            string
	shardWait                        time.Duration
	profile                          string
	serverWarmup                     time.Duration

	// Built from the registered drivers, server kinds and scenarios.
	servers map[string]*string // role → addresses, comma-separated
	sizes   map[string]*int    // ensemble kind → sandbox size
	options map[string]*string // option name → value
}

// Register adds the plan's flags to fs.
func (o *Flags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&o.impls, "impl", "redis", "`NAMES` of implementations, comma-separated (lockbench list shows them)")
	fs.StringVar(&o.scens, "scenario", "hot", "`NAMES` of scenarios, comma-separated")
	fs.StringVar(&o.clients, "clients", "1,4,16", "client `COUNTS`, comma-separated; each client has its own connection")
	fs.IntVar(&o.locks, "locks", 1, "number of lock names; client i uses lock i mod N (N ≥ clients: no contention)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time per cell")
	fs.Int64Var(&o.acquires, "acquires", 0, "measure this many acquisitions per cell instead of a duration")
	fs.StringVar(&o.ramp, "ramp", "", "staircase `START:STEP:EVERY` up to the largest --clients over the same connections, e.g. 4:4:5s (a cell per stair)")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured warm-up per cell")
	fs.StringVar(&o.hold, "hold", "0s", "`DIST` of the time each holder keeps the lock: 5ms, exp:5ms (exponential, mean) or uniform:1ms-10ms")
	fs.StringVar(&o.think, "think", "0s", "`DIST` of the pause between release and the next acquire (same forms as --hold)")
	fs.StringVar(&o.dist, "dist", "uniform", "keys: how acquisitions pick among --locks names (`KEYS`): uniform, zipf:S (S > 1) or hot:F/P")
	fs.StringVar(&o.rateText, "rate", "0", "rate: arrivals per second (open loop), as `N` or N/s")
	fs.StringVar(&o.arrival, "arrival", "constant", "rate: `KIND` of arrivals: constant (evenly spaced) or poisson")
	fs.IntVar(&o.maxInflight, "max-inflight", 0, "rate: acquisitions in flight at most; later arrivals are dropped (default: --clients)")
	fs.DurationVar(&o.ttl, "ttl", impl.DefaultTTL, "lock TTL (Redis PX)")
	fs.DurationVar(&o.retry, "retry", impl.DefaultRetry, "pause between polling attempts")
	fs.Float64Var(&o.jitter, "jitter", impl.DefaultJitter, "random `FRACTION` of --retry added or removed")
	fs.DurationVar(&o.acquireTimeout, "acquire-timeout", 0, "a client that has not got the lock within this gives up (tryLock with a wait); 0 waits until the cell ends")
	fs.BoolVar(&o.history, "history", true, "record every operation for the linearizability check; --history=false records none, saving its cost per cycle, and the report says the history was not checked")
	fs.BoolVar(&o.renew, "renew", false, "holders renew their TTL lease every TTL/3 while they hold it, only while it is still theirs (a watchdog)")
	fs.BoolVar(&o.guard, "guard", false, "holders read a counter on the lock's servers (in lockbench's memory where they keep none, unsharded) when granted and write it back plus one before releasing, fenced with the lock's token and unfenced: lost updates and stale writes in the Safety table (default: on in the fault scenarios, off in the load ones, whose holds it lengthens by two round trips)")
	o.servers = map[string]*string{}
	for _, n := range impl.Roles() {
		env := impl.EnvName(n.Role)
		form := "as host:port `ADDRS`"
		if n.DSN != nil { // the usage names its forms
			form = "as `ADDR`"
		}
		o.servers[n.Role] = fs.String(n.Role, os.Getenv(env), fmt.Sprintf("%s, %s (default: sandbox; env %s)", n.Usage, form, env))
	}
	o.sizes = map[string]*int{}
	for _, k := range sandbox.Kinds() {
		if k.Ensemble && k.SizeFlag != "" {
			o.sizes[k.Name] = fs.Int(k.SizeFlag, max(k.Default, 1), k.SizeUsage)
		}
	}
	fs.StringVar(&o.profile, "servers", string(sandbox.EnvOr(sandbox.DefaultProfile)),
		"`PROFILE` of the servers lockbench starts: production (as their distributions ship them: fsync on, the JVM's defaults, Redis's snapshots; warmed up before the first cell) or fast (nothing synced, ZooKeeper's JVM on its quick compiler, no warm-up) (env "+sandbox.EnvProfile+")")
	fs.DurationVar(&o.serverWarmup, "server-warmup", DefaultServerWarmup, "production: bound on each server kind's warm-up before the first measured cell, which runs until its rate per second is steady; 0 skips it")
	fs.DurationVar(&o.sessionTimeout, "zk-session-timeout", impl.DefaultSessionTimeout, "ZooKeeper session timeout")
	fs.IntVar(&o.repeat, "repeat", 1, "rounds per cell: hot, keys, rate and ramp stairs run each cell N times on fresh connections, interleaved with the other implementations, and give each timed figure a 95 % interval; burst and fault scenarios merge their N repeats into one cell")
	o.options = map[string]*string{}
	for _, opt := range append(impl.Options(), engine.ScenarioOptions()...) {
		if _, dup := o.options[opt.Name]; !dup {
			o.options[opt.Name] = fs.String(opt.Name, opt.Default, opt.Usage)
		}
	}
	fs.DurationVar(&o.dial, "connect-timeout", impl.DefaultDialTimeout, "bound on connecting one client")
	fs.IntVar(&o.connectPar, "connect-parallel", engine.DefaultConnectParallel, "clients connecting at once before a cell")
	fs.DurationVar(&o.max, "max-cell-time", engine.DefaultMaxCellTime, "hard bound on one cell's time")
	fs.StringVar(&o.slo, "slo", "", "`THRESHOLDS` every cell must meet, e.g. 'p99<=5ms,errors<=0.1%,acq/s>=1000' (p50 p90 p95 p99 p99.9 p99.99 max mean; errors as % or a count); a miss exits 5. Also plans capacity: the largest client count per implementation that met it")
	fs.StringVar(&o.out, "out", "", "results `DIR`, new or empty (default: a new results/<timestamp>)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed for every random choice: jitter, key choice, hold/think draws, arrivals (tokens are unique, never seeded)")
	fs.StringVar(&o.shard, "shard", "", "run shard `I/N` of a run split over N processes (0-based; auto/N reads JOB_COMPLETION_INDEX); needs server addresses; join the results with lockbench merge")
	fs.StringVar(&o.startAt, "start-at", "", "sharded: the first cell's common start, RFC 3339 (default: shard 0 publishes each start through the servers)")
	fs.DurationVar(&o.shardWait, "shard-wait", rendezvous.DefaultWait, "sharded: how long a shard waits for the others at each meeting")
	fs.StringVar(&o.runID, "run-id", os.Getenv("LOCKBENCH_RUN_ID"), "sharded: `ID` the shards of one run share on the servers (default: from the plan; env LOCKBENCH_RUN_ID)")
}

func (o *Flags) Plan(fs *pflag.FlagSet) (Plan, error) {
	var p Plan
	var err error
	if p.Impls, err = strictList("impl", o.impls); err != nil {
		return p, err
	}
	if p.Scenarios, err = strictList("scenario", o.scens); err != nil {
		return p, err
	}
	clients, err := strictList("clients", o.clients)
	if err != nil {
		return p, err
	}
	for _, f := range clients {
		n, err := strconv.Atoi(f)
		if err != nil {
			return p, fmt.Errorf("%w: --clients: %q is not a whole number", engine.ErrUsage, f)
		}
		p.Clients = append(p.Clients, n)
	}
	if o.acquires != 0 && fs.Changed("duration") {
		return p, fmt.Errorf("%w: give --duration or --acquires, not both", engine.ErrUsage)
	}
	if o.rate, err = parseRate(o.rateText); err != nil {
		return p, err
	}
	cell, err := o.cell()
	if err != nil {
		return p, err
	}
	p.Cell = cell
	if fs.Changed("guard") {
		p.Guard = &o.guard
	}
	if o.ramp != "" {
		if fs.Changed("duration") || o.acquires != 0 {
			return p, fmt.Errorf("%w: --ramp sets each stair's length; drop --duration and --acquires", engine.ErrUsage)
		}
		r, err := engine.ParseRamp(o.ramp)
		if err != nil {
			return p, fmt.Errorf("%w: --ramp: %v", engine.ErrUsage, err)
		}
		p.Ramp = &r
	}
	p.Sizes = map[string]int{}
	for kind, n := range o.sizes {
		if *n != 1 {
			p.Sizes[kind] = *n
		}
	}
	p.SLO, p.Out = o.slo, o.out
	if p.Profile, err = sandbox.ParseProfile(o.profile); err != nil {
		return p, fmt.Errorf("%w: --servers: %v", engine.ErrUsage, err)
	}
	if o.serverWarmup < 0 {
		return p, fmt.Errorf("%w: --server-warmup must be ≥ 0, got %v", engine.ErrUsage, o.serverWarmup)
	}
	p.ServerWarmup = o.serverWarmup
	if p.Shard, err = o.sharding(); err != nil {
		return p, err
	}
	return p, nil
}

// sharding reads --shard, --start-at, --shard-wait and --run-id.
func (o *Flags) sharding() (*Sharding, error) {
	if o.shard == "" {
		if o.startAt != "" {
			return nil, fmt.Errorf("%w: --start-at needs --shard", engine.ErrUsage)
		}
		return nil, nil
	}
	s, err := ParseShard(o.shard, os.Getenv)
	if err != nil {
		return nil, err
	}
	if o.shardWait <= 0 { // a zero Wait is the library's default; a user who typed 0 meant something else
		return nil, fmt.Errorf("%w: --shard-wait must be a positive duration, got %v", engine.ErrUsage, o.shardWait)
	}
	s.Wait, s.RunID = o.shardWait, o.runID
	if o.startAt != "" {
		if s.StartAt, err = time.Parse(time.RFC3339Nano, o.startAt); err != nil {
			return nil, fmt.Errorf("%w: --start-at %q: want RFC 3339, e.g. 2026-11-23T17:00:00Z", engine.ErrUsage, o.startAt)
		}
	}
	return s, nil
}

// ParseShard reads --shard i/N, 0 ≤ i < N; auto/N takes i from
// JOB_COMPLETION_INDEX, as a Kubernetes indexed Job sets it.
func ParseShard(v string, getenv func(string) string) (*Sharding, error) {
	is, ns, ok := strings.Cut(v, "/")
	n, err := strconv.Atoi(ns)
	if !ok || err != nil || n < 1 {
		return nil, fmt.Errorf("%w: --shard %q: want I/N (0-based I, N ≥ 1) or auto/N", engine.ErrUsage, v)
	}
	if is == "auto" {
		is = getenv("JOB_COMPLETION_INDEX")
		if is == "" {
			return nil, fmt.Errorf("%w: --shard auto/%d: JOB_COMPLETION_INDEX is not set", engine.ErrUsage, n)
		}
	}
	i, err := strconv.Atoi(is)
	if err != nil || i < 0 || i >= n {
		return nil, fmt.Errorf("%w: --shard %q: shard index %q must be a whole number from 0 to %d", engine.ErrUsage, v, is, n-1)
	}
	return &Sharding{Index: i, Count: n}, nil
}

// cell is the template cell the flags describe.
func (o *Flags) cell() (engine.CellSpec, error) {
	hold, err := dist.ParseDist(o.hold)
	if err != nil {
		return engine.CellSpec{}, fmt.Errorf("%w: --hold: %v", engine.ErrUsage, err)
	}
	think, err := dist.ParseDist(o.think)
	if err != nil {
		return engine.CellSpec{}, fmt.Errorf("%w: --think: %v", engine.ErrUsage, err)
	}
	keys, err := dist.ParseKeys(o.dist)
	if err != nil {
		return engine.CellSpec{}, fmt.Errorf("%w: --dist: %v", engine.ErrUsage, err)
	}
	c := engine.CellSpec{
		Locks: o.locks, Warmup: o.warmup, MaxTime: o.max, Repeat: o.repeat,
		Hold: hold.Mean(), Think: think.Mean(), HoldDist: hold, ThinkDist: think, Keys: keys,
		Rate: o.rate, Arrival: o.arrival, MaxInflight: o.maxInflight,
		ConnectParallel: o.connectPar, AcquireTimeout: o.acquireTimeout, Renew: o.renew,
		Config: impl.Config{
			Servers: impl.Servers{},
			TTL:     o.ttl, Retry: o.retry, Jitter: o.jitter, SessionTimeout: o.sessionTimeout,
			DialTimeout: o.dial, Seed: o.seed, Options: map[string]string{},
		},
	}
	for role, v := range o.servers {
		if addrs := splitList(*v); len(addrs) > 0 {
			c.Config.Servers[role] = addrs
		}
	}
	for name, v := range o.options {
		c.Config.Options[name] = *v
	}
	if o.jitter == 0 {
		c.Config.Jitter = -1 // explicit zero: WithDefaults would restore 0.5
	}
	if !o.history {
		c.HistoryOps = -1
	}
	if o.acquires != 0 {
		c.Acquires = o.acquires
	} else {
		c.Duration = o.duration
	}
	return c, nil
}

// parseRate reads --rate as arrivals per second: 500 or 500/s. The plan
// judges the number.
func parseRate(s string) (float64, error) {
	r, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "/s"), 64)
	if err != nil {
		return 0, fmt.Errorf("%w: --rate %q: want arrivals per second, e.g. 500 or 500/s", engine.ErrUsage, s)
	}
	return r, nil
}

// strictList splits a comma-separated flag value, refusing empty items
// ("4,,8"): a list with a hole in it is a typo, not a shorter list.
func strictList(flag, s string) ([]string, error) {
	out := strings.Split(s, ",")
	for i, f := range out {
		if out[i] = strings.TrimSpace(f); out[i] == "" {
			return nil, fmt.Errorf("%w: --%s %q has an empty item", engine.ErrUsage, flag, s)
		}
	}
	return out, nil
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
