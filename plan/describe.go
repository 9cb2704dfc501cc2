package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
)

// WakesWaiters reports whether any of a validated plan's implementations
// wakes its waiters (has a herd theory), so that a table shows wake-up
// columns.
func (p Plan) WakesWaiters() bool {
	for _, d := range p.drivers {
		if d.Theory != nil {
			return true
		}
	}
	return false
}

// DescribeServers names the sandboxed roles and their servers: one
// address, an ensemble's addresses, or how many independent servers.
func DescribeServers(s impl.Servers, sandboxed []string) string {
	var parts []string
	for _, n := range impl.Roles() {
		if !slices.Contains(sandboxed, n.Role) {
			continue
		}
		addrs := s[n.Role]
		k, _ := sandbox.LookupKind(n.Kind)
		if len(addrs) > 1 && !k.Ensemble {
			parts = append(parts, fmt.Sprintf("%s %d %s servers", n.Role, len(addrs), n.Kind))
		} else {
			parts = append(parts, n.Role+" "+strings.Join(addrs, ","))
		}
	}
	return strings.Join(parts, ", ")
}
