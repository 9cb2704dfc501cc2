package plan_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/plan"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/sandboxtest"
)

// The production profile is what runs by default: one cell per server
// kind, each server started with its distribution's durable settings
// (none of the fast profile's flags on its command line), the disk's
// synced writes timed, and each kind warmed before its first cell, all
// in meta.json. This is CI's production cell of every kind; the other
// tests run the fast profile.
func TestProductionProfileRunsEveryKind(t *testing.T) {
	groups := productionRows(t)
	for _, g := range groups {
		t.Run(strings.Join(g.kinds, ","), func(t *testing.T) { runProduction(t, g) })
	}
}

// productionGroup is one plan of the test: a row per server kind, with
// the option some need to run on their kind (a Redis row's topology).
type productionGroup struct {
	option       []string // flags, e.g. --redis-topology cluster
	kinds, names []string
}

// productionRows picks, for every server kind the sandbox knows, the first
// registered row that runs on it — by its own needs, else by a value of its
// topology option — so that a new kind is covered or this test fails.
func productionRows(t *testing.T) []productionGroup {
	t.Helper()
	var rows []impl.Driver
	for _, n := range impl.Names() {
		if d, _ := impl.Lookup(n); !strings.HasPrefix(n, "test-") && len(d.Needs) > 0 {
			rows = append(rows, d)
		}
	}
	groups := map[string]*productionGroup{}
	var order []string
	add := func(key string, option []string, kind, name string) {
		g, ok := groups[key]
		if !ok {
			g = &productionGroup{option: option}
			groups[key] = g
			order = append(order, key)
		}
		g.kinds = append(g.kinds, kind)
		if !slices.Contains(g.names, name) {
			g.names = append(g.names, name)
		}
	}
kinds:
	for _, k := range sandbox.Kinds() {
		for _, d := range rows {
			if slices.ContainsFunc(d.Needs, func(n impl.Need) bool { return n.Kind == k.Name }) {
				add("", nil, k.Name, d.Name)
				continue kinds
			}
		}
		for _, d := range rows {
			if d.Topology == nil {
				continue
			}
			for v, needs := range d.Topology.Needs {
				if slices.ContainsFunc(needs, func(n impl.Need) bool { return n.Kind == k.Name }) {
					add(v, []string{"--" + d.Topology.Option.Name, v}, k.Name, d.Name)
					continue kinds
				}
			}
		}
		t.Errorf("server kind %s: no registered row runs on it", k.Name)
	}
	var out []productionGroup
	for _, key := range order {
		g := *groups[key]
		slices.Sort(g.names)
		out = append(out, g)
	}
	return out
}

func runProduction(t *testing.T, g productionGroup) {
	kinds, names := g.kinds, g.names
	sandboxtest.Require(t, kinds...)
	var f plan.Flags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f.Register(fs)
	args := append([]string{"--servers", "production", "--server-warmup", "4s", "--impl", strings.Join(names, ","),
		"--clients", "4", "--acquires", "100", "--warmup", "0s", "--out", t.TempDir()}, g.option...)
	for _, n := range impl.Roles() {
		if fs.Lookup(n.Role) != nil {
			args = append(args, "--"+n.Role, "") // the sandbox's, whatever the environment names
		}
	}
	for _, d := range names {
		row, _ := impl.Lookup(d)
		for k, v := range row.Short { // a Lease row at client-go's defaults polls every 2 s
			args = append(args, "--"+k, v)
		}
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(fs)
	if err != nil {
		t.Fatal(err)
	}
	var fast []string
	p.OnServers = func(s impl.Servers, _ []string) {
		// Every process serving each server, read while it runs.
		for _, addrs := range s {
			for _, a := range addrs {
				pids, ok := sandbox.Serving(a)
				if !ok {
					t.Errorf("no process found serving %s", a)
					continue
				}
				for _, pid := range pids {
					b, _ := os.ReadFile(filepath.Join("/proc", itoa(pid), "cmdline"))
					for _, flag := range []string{"unsafe-no-fsync", "TieredStopAtLevel", "fsync=off", "flush-log-at-trx-commit=0"} {
						if strings.Contains(string(b), flag) {
							fast = append(fast, a+": "+flag)
						}
					}
				}
			}
		}
	}
	start := time.Now()
	sum, err := plan.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("production cells of %d kinds (%v, rows %v) in %v", len(kinds), kinds, names, time.Since(start).Round(time.Second))
	if len(fast) > 0 {
		t.Errorf("fast-profile flags on production servers: %v", fast)
	}
	if len(sum.Cells) != len(names) {
		t.Fatalf("%d cells, want %d", len(sum.Cells), len(names))
	}
	for _, c := range sum.Cells {
		if c.Acquires < 100 || c.Errors > 0 || c.SafetyViolations > 0 {
			t.Errorf("%s: %d acquisitions, %d errors, %d violations", c.Impl, c.Acquires, c.Errors, c.SafetyViolations)
		}
	}
	m, err := result.ReadMeta(filepath.Join(p.Out, result.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	var set []string
	for _, st := range m.ServerSettings {
		set = append(set, st.Kind)
	}
	slices.Sort(set)
	sorted := slices.Sorted(slices.Values(kinds))
	if m.ServerProfile != "production" || !isSuperset(set, sorted) {
		t.Errorf("meta: profile %q, settings of %v; want production for %v", m.ServerProfile, set, sorted)
	}
	if d := m.DiskSync; d == nil || d.Count == 0 || d.P50Ms <= 0 || d.P99Ms < d.P50Ms {
		t.Errorf("meta: disk fdatasync %+v", d)
	}
	var warmed []string
	for _, w := range m.ServerWarmup {
		warmed = append(warmed, w.Kind)
		if len(w.RatesPerS) == 0 || w.Seconds <= 0 || w.Error != "" {
			t.Errorf("warm-up of %s: %+v", w.Kind, w)
		}
	}
	slices.Sort(warmed)
	if !isSuperset(warmed, sorted) {
		t.Errorf("warmed %v, want every kind %v", warmed, sorted)
	}
}

// isSuperset says every element of want is in got.
func isSuperset(got, want []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

func itoa(n int) string { return strconv.Itoa(n) }
