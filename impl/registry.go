package impl

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

var (
	mu      sync.RWMutex
	drivers = map[string]Driver{}
)

// Register makes an implementation available by name. It panics on an empty
// name, a nil constructor or a duplicate name: those are programming errors.
func Register(d Driver) {
	mu.Lock()
	defer mu.Unlock()
	if d.Name == "" || d.New == nil {
		panic("impl: Register with empty name or nil New")
	}
	checkNeeds(d.Name, d.Needs)
	if t := d.Topology; t != nil {
		if _, ok := t.Needs[t.Option.Default]; !ok {
			panic(fmt.Sprintf("impl: Register(%q): the topology's default %q has no needs", d.Name, t.Option.Default))
		}
		for _, needs := range t.Needs {
			checkNeeds(d.Name, needs)
		}
		d.Needs = t.Needs[t.Option.Default]
	}
	if _, dup := drivers[d.Name]; dup {
		panic(fmt.Sprintf("impl: Register called twice for %q", d.Name))
	}
	drivers[d.Name] = d
}

// checkNeeds panics on a need without a role or a kind, and gives a need
// without a count its default, 1.
func checkNeeds(driver string, needs []Need) {
	for i, n := range needs {
		if n.Role == "" || n.Kind == "" {
			panic(fmt.Sprintf("impl: Register(%q): need %d lacks a role or a kind", driver, i))
		}
		if n.Count <= 0 {
			needs[i].Count = 1
		}
	}
}

// Names returns the registered implementation names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Lookup returns the driver registered under name.
func Lookup(name string) (Driver, bool) {
	mu.RLock()
	defer mu.RUnlock()
	d, ok := drivers[name]
	return d, ok
}

// Roles returns every server role the registered drivers declare, each
// once (the largest Count wins), sorted by role.
func Roles() []Need {
	mu.RLock()
	defer mu.RUnlock()
	by := map[string]Need{}
	for _, d := range drivers {
		for _, n := range d.allNeeds() {
			have, ok := by[n.Role]
			switch {
			case !ok:
				by[n.Role] = n
			case n.Count > have.Count:
				have.Count = n.Count
				by[n.Role] = have
			}
		}
	}
	out := make([]Need, 0, len(by))
	for _, n := range by {
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b Need) int { return strings.Compare(a.Role, b.Role) })
	return out
}

// Options returns every option the registered drivers declare, each once,
// sorted by name. Drivers that share an option declare the same value.
func Options() []Option {
	mu.RLock()
	defer mu.RUnlock()
	by := map[string]Option{}
	for _, d := range drivers {
		for _, o := range d.Options {
			by[o.Name] = o
		}
	}
	out := make([]Option, 0, len(by))
	for _, o := range by {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b Option) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// allNeeds is every need d declares, whatever its topology.
func (d Driver) allNeeds() []Need {
	if d.Topology == nil {
		return d.Needs
	}
	var out []Need
	for _, needs := range d.Topology.Needs {
		out = append(out, needs...)
	}
	return out
}
