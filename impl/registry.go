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
	for i, n := range d.Needs {
		if n.Role == "" || n.Kind == "" {
			panic(fmt.Sprintf("impl: Register(%q): need %d lacks a role or a kind", d.Name, i))
		}
		if n.Count <= 0 {
			d.Needs[i].Count = 1
		}
	}
	if _, dup := drivers[d.Name]; dup {
		panic(fmt.Sprintf("impl: Register called twice for %q", d.Name))
	}
	drivers[d.Name] = d
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
		for _, n := range d.Needs {
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
