package impl

import (
	"runtime/debug"
	"sync"
)

// About says what a driver's row measures: the library it calls and the
// release of it this binary was built with ("go.etcd.io/etcd/client/v3
// v3.6.16"), or, for a driver that is lockbench's own code, what it is a
// recipe of. The version is read from the build, never typed by hand, so
// that a go.mod upgrade shows in every report made after it.
func (d Driver) About() string {
	if d.Library == "" {
		if d.Recipe == "" {
			return "lockbench's own code"
		}
		return "lockbench's own recipe of " + d.Recipe
	}
	return d.Library + " " + ModuleVersion(d.Library)
}

var buildDeps = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	for _, m := range info.Deps {
		v := m.Version
		if m.Replace != nil {
			v = m.Replace.Version + " (replacing " + m.Version + ")"
		}
		out[m.Path] = v
	}
	return out
})

// ModuleVersion is the version of the Go module path this binary was
// built with, or "(version unknown)" when the build does not say (a
// binary built without module support).
func ModuleVersion(path string) string {
	if v, ok := buildDeps()[path]; ok && v != "" {
		return v
	}
	return "(version unknown)"
}

// Abouts maps each named driver to its About, for meta.json: what every
// row of a run measured, as the binary that ran it was built.
func Abouts(names []string) map[string]string {
	out := make(map[string]string, len(names))
	for _, n := range names {
		if d, ok := Lookup(n); ok {
			out[n] = d.About()
		}
	}
	return out
}
