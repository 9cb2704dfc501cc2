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
	impls := map[string]string{"redis": "redis", "zookeeper": "zk-pred", "etcd": "etcd", "postgres": "pg-advisory", "mysql": "mysql-getlock"}
	var kinds, names []string
	for k, i := range impls {
		kinds, names = append(kinds, k), append(names, i)
	}
	slices.Sort(names)
	sandboxtest.Require(t, kinds...)
	var f plan.Flags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f.Register(fs)
	args := []string{"--servers", "production", "--server-warmup", "4s", "--impl", strings.Join(names, ","),
		"--clients", "4", "--acquires", "100", "--warmup", "0s", "--out", t.TempDir()}
	for _, role := range []string{"redis", "zk", "etcd", "postgres", "mysql"} {
		if fs.Lookup(role) != nil {
			args = append(args, "--"+role, "") // the sandbox's, whatever the environment names
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
	p.OnServers = func(s plan.Servers, _ []string) {
		// Every process serving each server, read while it runs.
		for _, addrs := range s {
			for _, a := range addrs {
				pids, ok := sandbox.Serving(a)
				if !ok {
					t.Errorf("no process found serving %s", a)
					continue
				}
				b, _ := os.ReadFile(filepath.Join("/proc", itoa(pids[0]), "cmdline"))
				for _, flag := range []string{"unsafe-no-fsync", "TieredStopAtLevel", "fsync=off", "flush-log-at-trx-commit=0"} {
					if strings.Contains(string(b), flag) {
						fast = append(fast, a+": "+flag)
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
	t.Logf("production cells of %d kinds in %v", len(kinds), time.Since(start).Round(time.Second))
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
	if m.ServerProfile != "production" || len(m.ServerSettings) != len(kinds) {
		t.Errorf("meta: profile %q, settings %+v; want production for %d kinds", m.ServerProfile, m.ServerSettings, len(kinds))
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
	slices.Sort(kinds)
	if !slices.Equal(warmed, kinds) {
		t.Errorf("warmed %v, want every kind %v", warmed, kinds)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
