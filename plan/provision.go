package plan

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"slices"
	"time"

	"github.com/lockbench/lockbench/dist"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/dsn"
	"github.com/lockbench/lockbench/internal/sandbox"
	_ "github.com/lockbench/lockbench/internal/sandbox/kinds" // every server kind, registered
	"github.com/lockbench/lockbench/result"
)

// provisioned is the servers a run uses: those given, and those its
// sandbox started for the roles that were not.
type provisioned struct {
	servers   impl.Servers
	sandboxed []string // roles the sandbox serves
	roles     []impl.Need
	fleet     *sandbox.Fleet
	// procsWhy says how lockbench chooses its GOMAXPROCS, "" when Go's
	// stands (procsTrial).
	procsWhy string
	// disk is the sandbox's synced-write latency, warmups the servers'
	// warm-ups: both before the first cell.
	disk    *result.DiskSync
	warmups []result.ServerWarmup
}

// measureDisk times synced writes where the sandbox keeps its servers'
// data: at most diskWrites of them, for at most diskBound.
func (p *provisioned) measureDisk() *result.DiskSync {
	if p.fleet == nil {
		return nil
	}
	lat, _ := sandbox.SyncLatencies(p.fleet.Dir(), diskWrites, diskBound)
	return result.DiskSyncOf(p.fleet.Dir(), sandbox.SyncWriteBytes, lat)
}

// diskWrites and diskBound bound the disk probe: 500 writes give a p99
// of five samples, and take 0.1 s on a local SSD, 2.5 s at the 5 ms of a
// slow cloud disk — which the bound then cuts at 2 s.
const (
	diskWrites = 500
	diskBound  = 2 * time.Second
)

// settings says how the sandbox configured each kind it started, in the
// run's profile.
func (p *provisioned) settings(profile sandbox.Profile) []result.ServerSetting {
	if p.fleet == nil {
		return nil
	}
	var out []result.ServerSetting
	for _, k := range sandbox.Kinds() {
		if len(p.fleet.Servers[k.Name]) > 0 && k.Settings != nil {
			out = append(out, result.ServerSetting{Kind: k.Name, Settings: k.Settings(profile)})
		}
	}
	return out
}

// local is how many server processes share this machine: those the
// sandbox started, and each distinct address given on loopback (a user's
// `lockbench sandbox`, say).
func (p *provisioned) local() int {
	n := 0
	if p.fleet != nil {
		for _, ss := range p.fleet.Servers {
			n += len(ss)
		}
	}
	seen := map[string]bool{}
	for role, addrs := range p.servers {
		if slices.Contains(p.sandboxed, role) {
			continue
		}
		for _, a := range addrs {
			host, _, err := net.SplitHostPort(a)
			if ip := net.ParseIP(host); err == nil && !seen[a] && (host == "localhost" || ip != nil && ip.IsLoopback()) {
				seen[a] = true
				n++
			}
		}
	}
	return n
}

func (p *provisioned) close() {
	if p.fleet != nil {
		p.fleet.Close()
	}
}

// provision starts, in one sandbox, the servers of every role the plan's
// drivers need and the user did not name. Roles of one kind share its
// servers: the single Redis is the first of Redlock's five masters.
func provision(ctx context.Context, p Plan) (*provisioned, error) {
	out := &provisioned{servers: p.Cell.Config.Servers.Clone(), roles: p.needs()}
	spec := sandbox.Spec{}
	for _, n := range out.roles {
		if len(out.servers[n.Role]) > 0 {
			continue
		}
		k, ok := sandbox.LookupKind(n.Kind)
		if !ok {
			return out, fmt.Errorf("lockbench: no server kind %q for --%s", n.Kind, n.Role)
		}
		want := n.Count
		if k.Ensemble {
			want = max(p.Sizes[n.Kind], 1)
		}
		spec[n.Kind] = max(spec[n.Kind], want)
		out.sandboxed = append(out.sandboxed, n.Role)
	}
	if len(spec) == 0 {
		return out, nil
	}
	profile := p.Profile
	if profile == "" {
		profile = sandbox.DefaultProfile
	}
	f, err := sandbox.Start(sandbox.WithProfile(ctx, profile), spec)
	if err != nil {
		return out, err
	}
	out.fleet = f
	for _, n := range out.roles {
		if slices.Contains(out.sandboxed, n.Role) {
			out.servers[n.Role] = RoleAddrs(f, n)
		}
	}
	return out, nil
}

// dead names the sandboxed servers that are no longer running.
func (p *provisioned) dead() []string {
	if p.fleet == nil {
		return nil
	}
	var out []string
	for kind, ss := range p.fleet.Servers {
		for _, s := range ss {
			if !s.Running() {
				out = append(out, kind+" "+s.Addr)
			}
		}
	}
	slices.Sort(out)
	return out
}

// RoleAddrs are the addresses of f that serve role n: its first n.Count
// servers of n's kind, or the whole ensemble; nil when f has too few.
func RoleAddrs(f *sandbox.Fleet, n impl.Need) []string {
	addrs := f.Addrs(n.Kind)
	k, _ := sandbox.LookupKind(n.Kind)
	switch {
	case k.Ensemble:
		return addrs
	case len(addrs) >= n.Count:
		return addrs[:n.Count]
	case n.Check == nil:
		return nil
	}
	// Fewer than the role's count may still serve it as the role's own
	// check allows (three Redlock masters: an odd number ≥ 3): the most
	// that it does.
	for m := len(addrs); m > 1; m-- {
		if n.Check(addrs[:m]) == nil {
			return addrs[:m]
		}
	}
	return nil
}

// versions asks every server what it is, through its kind.
func (p *provisioned) versions(ctx context.Context) map[string]string {
	out := map[string]string{}
	for _, n := range p.roles {
		k, _ := sandbox.LookupKind(n.Kind)
		if k.Version == nil {
			continue
		}
		for _, a := range p.servers[n.Role] {
			key := k.Name + " " + dsn.Redact(a)
			if _, seen := out[key]; !seen {
				out[key] = k.Version(ctx, a)
			}
		}
	}
	return out
}

func (p Plan) meta(started time.Time, f *provisioned) result.Meta {
	c := p.Cell.Config.WithDefaults()
	hold, think := p.Cell.HoldDist, p.Cell.ThinkDist
	if hold.IsZero() {
		hold = dist.Fixed(p.Cell.Hold)
	}
	if think.IsZero() {
		think = dist.Fixed(p.Cell.Think)
	}
	var ramp string
	if r := p.Ramp; r != nil {
		ramp = fmt.Sprintf("%d:%d:%v", r.Start, r.Step, r.Every)
	}
	return result.Meta{
		Ramp: ramp, Order: RunOrder, Renew: p.Cell.Renew, AcquireTimeoutS: p.Cell.AcquireTimeout.Seconds(),
		Version: Version, GoVersion: runtime.Version(), Started: started, Host: hostFacts(f.procsWhy),
		Hold: hold.String(), Think: think.String(), Keys: p.Cell.Keys.String(), Rate: p.Cell.Rate,
		Arrival: p.Cell.Arrival, MaxInflight: p.Cell.MaxInflight, Repeat: p.Cell.Repeat,
		Seed: c.Seed, Impls: p.Impls, Libraries: impl.Abouts(p.Impls), Scenarios: p.Scenarios, Clients: slices.Clone(p.Clients),
		Locks: max(p.Cell.Locks, 1), DurationS: p.Cell.Duration.Seconds(), Acquires: p.Cell.Acquires,
		WarmupS: p.Cell.Warmup.Seconds(), HoldS: p.Cell.Hold.Seconds(), ThinkS: p.Cell.Think.Seconds(),
		TTLS: c.TTL.Seconds(), RetryS: c.Retry.Seconds(), Options: c.Options, SLO: p.SLO,
		ScenarioKinds: p.scenarioKinds(),
		Servers:       redacted(f.servers), Sandboxed: f.sandboxed, Sizes: p.Sizes,
		ServerProfile: string(p.Profile), ServerSettings: f.settings(p.Profile),
		DiskSync: f.disk, ServerWarmup: f.warmups,
	}
}

// redacted is the servers as meta.json records them: a password in a
// connection string the user gave stays out of the results.
func redacted(s impl.Servers) result.Addrs {
	out := result.Addrs{}
	for role, addrs := range s {
		for _, a := range addrs {
			out[role] = append(out[role], dsn.Redact(a))
		}
	}
	return out
}

// scenarioKinds is how each of the plan's scenarios drives its clients,
// for meta.json: readers list the plan's cells from it (result.PlanCells).
func (p Plan) scenarioKinds() map[string]result.Kind {
	out := map[string]result.Kind{}
	for _, s := range p.scenarios {
		out[s.Name()] = s.Kind()
	}
	return out
}
