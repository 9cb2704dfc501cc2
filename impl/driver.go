package impl

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/dsn"
	"github.com/lockbench/lockbench/result"
)

// Driver describes one implementation completely: what it needs, what it
// can be told, what it guarantees and what theory predicts of it. The
// CLI's flags, `lockbench list`, validation, the sandbox, the fault
// scenarios and the reports are all derived from these declarations, so
// that a new lock is its own package and one Register call.
type Driver struct {
	Name        string
	Description string
	// Library is the Go module path of the library the driver calls as its
	// users do ("github.com/go-redsync/redsync/v4"); About adds the version
	// the build holds. Empty for lockbench's own code.
	Library string
	// Recipe names what lockbench's own code follows, when Library is
	// empty: "etcd's concurrency.Mutex, with the watch started at the
	// server's current revision", "Redisson 3.52.0's RedissonLock".
	Recipe string
	// Needs lists the sets of servers the driver connects to; the sandbox
	// starts what the user did not name.
	Needs []Need
	// Options are the driver's own settings, each a flag of `lockbench
	// run`; New finds their values in Config.Options.
	Options []Option
	// Topology, if set, lets one of Options choose the servers the
	// driver runs on (--redis-topology cluster: a Redis Cluster instead
	// of one Redis). For resolves it; Needs are the default's.
	Topology *Topology
	// Caps says what the driver's leases guarantee, for fault scenarios.
	Caps Caps
	// Theory is what the driver's way of waking waiters predicts for
	// release wake-ups; nil for drivers whose waiters poll.
	Theory *result.Theory
	// Lease, if set, says how long a grant outlives a silent holder under
	// cfg and what bounds it, where that is a setting of the driver's own
	// (rueidislock's KeyValidity, a Kubernetes Lease's LeaseDuration)
	// rather than the TTL or session timeout its Caps name. Fault
	// scenarios compare recovery with it (see LeaseBound).
	Lease func(cfg Config) (time.Duration, string)
	// WaiterBound, if set, is how long a waiter that died while queued can
	// hold up the waiters behind it under cfg, and the driver's name for
	// that setting (Redisson's fair lock: each place's wait timeout). Nil:
	// see DeadWaiterBound.
	WaiterBound func(cfg Config) (time.Duration, string)
	// Wait, if set, says what an acquisition that finds the lock held
	// waits for, when that is a step of its own rather than the release's
	// round trip (a poll interval, a server's resync period): the step
	// a latency quantile jumps to once that share of arrivals find the
	// lock held, which a capacity verdict names.
	Wait func(cfg Config) string
	// Short, if set, are option values that put the driver's waits on a
	// shorter clock for tests and benchmark smokes: a Kubernetes Lease's
	// 15 s / 10 s / 2 s as 2 s / 1 s / 50 ms, the same polls and
	// takeovers seconds sooner. What lockbench run measures is the
	// defaults' unless its options say otherwise.
	Short map[string]string
	// New connects one simulated client. It returns once the connection or
	// session is established, so that no set-up lands inside a measurement.
	New func(ctx context.Context, cfg Config) (Locker, error)
	// Validate, if set, checks a configuration beyond what each option
	// checks alone (a per-master timeout below the TTL, say). Errors are
	// the user's to fix.
	Validate func(cfg Config) error
	// Cleanup, if set, removes what a cell left on the servers under its
	// namespace (ZooKeeper's lock nodes). The harness calls it once the
	// cell's sessions are closed and its counters read, on a connection of
	// its own, so it touches no measurement.
	Cleanup func(ctx context.Context, s Servers, namespace string) error
	// Residue, if set, counts what the servers hold under a namespace
	// (queue nodes, lock keys): the harness calls it once a cell's clients
	// are done and before their sessions close, where nothing should be
	// left, and the conformance suite (impl/impltest) checks with it that
	// cancelled and abandoned Acquires leave nothing behind. It is the one
	// declaration of a lock's leftovers.
	Residue func(ctx context.Context, s Servers, namespace string) (int, error)
}

// Topology is a choice, by one option's value, among the sets of servers
// a driver can run on: the same lock on one Redis or on a Redis Cluster,
// one row with the servers as a setting rather than two rows.
type Topology struct {
	// Option chooses; it is one of the driver's Options.
	Option Option
	// Needs are the servers each of the option's values runs on; the
	// option's default maps to the driver's Needs.
	Needs map[string][]Need
}

// For returns d as it runs under cfg: with a Topology, its Needs are the
// ones cfg's value of the topology's option chooses. The CLI, the
// sandbox and the cells read a driver's needs only from what For returns.
func (d Driver) For(cfg Config) Driver {
	if d.Topology == nil {
		return d
	}
	if n, ok := d.Topology.Needs[cfg.Option(d.Topology.Option)]; ok {
		d.Needs = n
	}
	return d
}

// Need is one set of servers a driver connects to.
type Need struct {
	// Role names the set: its key in Servers, and the CLI's address flag
	// and environment variable (--redis, LOCKBENCH_REDIS). Drivers that
	// share a role share its servers.
	Role string
	// Kind is the server kind to start for it in a sandbox ("redis",
	// "zookeeper"); a kind that forms ensembles starts one ensemble.
	Kind string
	// Count is how many independent servers the role wants: 1, or five
	// Redlock masters. Default 1.
	Count int
	// Usage describes the addresses for the flag's help.
	Usage string
	// Check, if set, judges addresses the user gives for the role (an odd
	// number of masters, say); the sandbox starts Count.
	Check func(addrs []string) error
	// DSN, if set, parses a connection string the role takes besides
	// host:port (PostgreSQL's URL and key=value forms, go-sql-driver's),
	// as the driver will: an address that names a scheme, a user or a
	// setting is judged by it, not as host:port. Nil: host:port only.
	DSN func(addr string) error
	// Conns is how many connections each client opens to each server of
	// the role (a command and a subscription connection: 2). Default 1.
	Conns int
	// Redirects says the role's clients connect to addresses the servers
	// name (a Redis Cluster's slot table), not only to the ones given:
	// faults staged by proxies in front of the given ones do not apply.
	Redirects bool
	// Fence, if set, keeps a fencing counter on the role's servers, for
	// fault scenarios that must give tokens to a lock without its own
	// (Caps without Fencing). Nil: these servers keep none, and such a
	// lock is not staged where tokens are needed.
	Fence FenceFunc
	// Guard, if set, keeps the guarded register (see Guard) on the role's
	// servers. Nil: these servers keep none, and a cell that asks for one
	// (--guard) runs without it and says so.
	Guard GuardFunc
}

// CheckAddr judges one address given for n's role: a connection string
// by n.DSN where the role takes one, host:port otherwise. The error says
// which forms the role takes.
func (n Need) CheckAddr(addr string) error {
	if n.DSN != nil && dsn.IsDSN(addr) {
		if err := n.DSN(addr); err != nil {
			return fmt.Errorf("%q is neither host:port nor a connection string it can use: %w", dsn.Redact(addr), err)
		}
		return nil
	}
	if !isHostPort(addr) {
		if n.DSN != nil {
			return fmt.Errorf("%q is neither host:port nor a connection string", dsn.Redact(addr))
		}
		return fmt.Errorf("%q is not host:port", dsn.Redact(addr))
	}
	return nil
}

// isHostPort reports whether addr is host:port with a numeric port and a
// host that holds none of a connection string's punctuation: a
// go-sql-driver DSN splits at its last colon too.
func isHostPort(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || strings.ContainsAny(host, "/@()= ") {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n > 0 && n <= 65535
}

// Caps are what a driver's leases guarantee; fault scenarios apply by
// them, never by a driver's name.
type Caps uint

const (
	// LeaseTTL: a grant lives Config.TTL unless released, so a dead
	// holder blocks others until then.
	LeaseTTL Caps = 1 << iota
	// LeaseSession: a grant lives as long as the holder's session, which
	// the server ends Config.SessionTimeout after the holder fell silent.
	LeaseSession
	// Fencing: Lease.Fence returns tokens that grow with grant order per
	// lock name. The pause scenario then judges the lock by the write its
	// token guards: a stale grant the token fenced is not a violation.
	Fencing
	// Quorum: the lock is granted by a majority of independent servers
	// (Needs[0].Count of them).
	Quorum
	// Renewal: leases implement Renewer, so a holder can keep a TTL lease
	// for longer than the TTL (--renew).
	Renewal
	// LeaseConn: a grant lives as long as the holder's connection, with no
	// timer of its own: the server frees it when it sees the connection
	// end (a reset, a close, its own TCP keepalive giving up on a silent
	// peer, a restart). A holder that stalls keeps it for as long as it
	// stalls. PostgreSQL advisory locks and MySQL GET_LOCK are such.
	LeaseConn
)

// Has reports whether c holds every capability of x.
func (c Caps) Has(x Caps) bool { return c&x == x }

// Any reports whether c holds at least one capability of x.
func (c Caps) Any(x Caps) bool { return c&x != 0 }

// Lease is how long a grant outlives a silent holder under cfg, and what
// bounds it ("TTL", "session timeout"); 0 and "" for a lease that never
// expires by itself. A connection's lease has no duration of its own: 0,
// and what ends it — the connection's end, which for a silent peer is the
// server's TCP keepalive (its settings are the connection's: see
// Keepaliver).
func (c Caps) Lease(cfg Config) (time.Duration, string) {
	switch {
	case c.Has(LeaseSession):
		return cfg.SessionTimeout, "session timeout"
	case c.Has(LeaseTTL):
		return cfg.TTL, "TTL"
	case c.Has(LeaseConn):
		return 0, "connection end (a silent peer: the server's TCP keepalive)"
	}
	return 0, ""
}

// LeaseBound is how long a grant outlives a silent holder under cfg, and
// what bounds it: the driver's own Lease when it declares one, else what
// its Caps say (Caps.Lease).
func (d Driver) LeaseBound(cfg Config) (time.Duration, string) {
	if d.Lease != nil {
		return d.Lease(cfg)
	}
	return d.Caps.Lease(cfg)
}

// DeadWaiterBound is how long a waiter that died while queued (its
// process gone, its connection reset) can hold up the waiters behind it
// under cfg, by what the lock keeps of a waiter: the driver's own
// WaiterBound; else a session lease's bound, where each waiter holds a
// lease of its own in the queue (a ZooKeeper node, an etcd key) that only
// its session's end removes; else none — a poller keeps nothing queued,
// and a server's queue drops a waiter with its connection.
func (d Driver) DeadWaiterBound(cfg Config) (time.Duration, string) {
	switch {
	case d.WaiterBound != nil:
		return d.WaiterBound(cfg)
	case d.Caps.Has(LeaseSession):
		return d.LeaseBound(cfg)
	}
	return 0, ""
}

// Option is a setting a driver or a scenario declares: a flag of `lockbench
// run` (--NAME), with its default, its help and its check. Values travel
// as text in Config.Options; Config's typed getters read them.
type Option struct {
	Name    string
	Default string
	Usage   string
	// Check validates a value given by the user; nil accepts any.
	Check func(string) error
}

// DurationOption declares an option holding a duration ≥ min.
func DurationOption(name string, def time.Duration, min time.Duration, usage string) Option {
	return Option{Name: name, Default: def.String(), Usage: usage, Check: func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < min {
			return fmt.Errorf("want a duration ≥ %v, e.g. %v; got %q", min, def, v)
		}
		return nil
	}}
}

// ChoiceOption declares an option holding one of choices.
func ChoiceOption(name, def, usage string, choices ...string) Option {
	return Option{Name: name, Default: def, Usage: usage, Check: func(v string) error {
		for _, c := range choices {
			if v == c {
				return nil
			}
		}
		return fmt.Errorf("want one of %v; got %q", choices, v)
	}}
}

// IntOption declares an option holding a whole number within lo and hi.
func IntOption(name string, def, lo, hi int, usage string) Option {
	return Option{Name: name, Default: strconv.Itoa(def), Usage: usage, Check: func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("want a whole number from %d to %d; got %q", lo, hi, v)
		}
		return nil
	}}
}

// Option returns the value of the option o in c, or its default.
func (c Config) Option(o Option) string {
	if v, ok := c.Options[o.Name]; ok && v != "" {
		return v
	}
	return o.Default
}

// Duration returns the duration option o in c, or its default; a value
// that does not parse gives the default too (Check refuses it earlier).
func (c Config) Duration(o Option) time.Duration {
	if d, err := time.ParseDuration(c.Option(o)); err == nil {
		return d
	}
	d, _ := time.ParseDuration(o.Default)
	return d
}

// Int returns the whole-number option o in c, or its default.
func (c Config) Int(o Option) int {
	if n, err := strconv.Atoi(c.Option(o)); err == nil {
		return n
	}
	n, _ := strconv.Atoi(o.Default)
	return n
}

// CheckOptions checks every value in opts that the user gave (present in
// values); the error names the option.
func CheckOptions(opts []Option, values map[string]string) error {
	for _, o := range opts {
		v, ok := values[o.Name]
		if !ok || o.Check == nil {
			continue
		}
		if err := o.Check(v); err != nil {
			return fmt.Errorf("--%s: %w", o.Name, err)
		}
	}
	return nil
}

// EnvName is the environment variable that names a role's servers, as the
// CLI reads it and `lockbench sandbox` prints it: LOCKBENCH_REDIS.
func EnvName(role string) string {
	return "LOCKBENCH_" + strings.ToUpper(strings.ReplaceAll(role, "-", "_"))
}

// ConnsPerClient is how many connections one simulated client of d holds:
// one per independent server it needs, one per ensemble.
func (d Driver) ConnsPerClient(ensemble func(kind string) bool) int {
	n := 0
	for _, need := range d.Needs {
		servers := need.Count
		if ensemble(need.Kind) {
			servers = 1
		}
		n += servers * max(need.Conns, 1)
	}
	return n
}
