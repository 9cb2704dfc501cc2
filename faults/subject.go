package faults

import (
	"fmt"
	"slices"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	_ "github.com/lockbench/lockbench/internal/sandbox/kinds" // every server kind, registered
	"github.com/lockbench/lockbench/result"
)

// subject is the lock a fault is staged on, resolved once per cell from
// what its driver declares: the servers a fault acts on (the driver's
// first need), and what their kind lets a fault do to them. No fault knows
// a driver or a server kind by name.
type subject struct {
	impl.Driver
	need impl.Need    // zero for a driver without servers
	kind sandbox.Kind // zero when the sandbox knows no such kind
}

func subjectOf(d impl.Driver) subject {
	s := subject{Driver: d}
	if len(d.Needs) > 0 {
		s.need = d.Needs[0]
		s.kind, _ = sandbox.LookupKind(s.need.Kind)
	}
	return s
}

// layout is how a lock's servers can be made to fail under it.
type layout int

const (
	unstaged   layout = iota
	replicated        // one server, a TTL lease: a replica can be promoted
	masters           // a quorum of independent masters
	ensemble          // members that move a client's session when one is lost
)

// layout classes the subject's servers by what the lock and their kind
// declare: a quorum of masters, an ensemble whose kind says which member
// is which (its clients then talk to one member at a time), or one server
// whose kind can replicate and promote. Others — an etcd cluster, say —
// have no layout, and the scenarios that need one skip them.
func (s subject) layout() layout {
	switch {
	case len(s.Needs) == 0:
		return unstaged
	case s.Caps.Has(impl.Quorum):
		return masters
	case s.Caps.Has(impl.LeaseSession) && s.kind.Ensemble && s.kind.Mode != nil:
		return ensemble
	case s.Caps.Has(impl.LeaseTTL) && s.need.Count == 1 && s.kind.Replicate != nil && s.kind.Promote != nil:
		return replicated
	}
	return unstaged
}

// targets lists the servers of servers that the subject uses.
func (s subject) targets(servers impl.Servers) []string {
	return slices.Clone(servers[s.need.Role])
}

// with returns servers with the subject's replaced by addrs.
func (s subject) with(servers impl.Servers, addrs []string) impl.Servers {
	return servers.With(s.need.Role, addrs)
}

// on is the subject's servers at addrs alone.
func (s subject) on(addrs []string) impl.Servers { return impl.Servers{s.need.Role: addrs} }

// bound is what recovery from a dead holder is compared with: the TTL
// or the session timeout, as the driver's lease says.
func (s subject) bound(c impl.Config) time.Duration {
	d, _ := s.LeaseBound(c)
	return d
}

// leaseBound names what ends the subject's lease without its holder.
func (s subject) leaseBound() result.Bound {
	switch {
	case s.Caps.Has(impl.LeaseSession):
		return result.BoundSession
	case s.Caps.Has(impl.LeaseTTL):
		return result.BoundTTL
	case s.Caps.Has(impl.LeaseConn):
		return result.BoundConn
	}
	return ""
}

func needServers(spec engine.CellSpec, s subject) error {
	if len(s.targets(spec.Config.Servers)) == 0 {
		return fmt.Errorf("%w: %s %s: no server address for %s", engine.ErrUsage, spec.Scenario.Name(), spec.Impl, spec.Impl)
	}
	return nil
}
