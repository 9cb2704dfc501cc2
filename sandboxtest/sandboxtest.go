// Package sandboxtest starts real servers for tests, in the manner of
// net/http/httptest: Start(t, needs…) starts what the needs name on free
// loopback ports, returns their addresses by role, and stops them when the
// test (or benchmark) ends. A machine without the servers installed skips
// the test, saying why — unless CI is set: there a missing server fails
// the test (see sandbox.MissingFails). A cell run on these servers reports
// their own counters when its spec is given the sandbox's kinds
// (CellSpec.ServerKinds: sandbox.Meter{}), as a plan's cells are.
package sandboxtest

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	_ "github.com/lockbench/lockbench/internal/sandbox/kinds" // every server kind, registered
)

// Start returns servers for every need: the addresses named in the
// environment (LOCKBENCH_<ROLE>, as `lockbench sandbox` prints them) or,
// for the others, a sandbox started for this test and stopped by its
// cleanup. Needs of one kind share its servers, as in a run; an ensemble
// kind starts one server (see StartSized).
func Start(t testing.TB, needs ...impl.Need) impl.Servers {
	t.Helper()
	return StartSized(t, nil, needs...)
}

// StartSized is Start with the sizes of sandboxed ensembles by kind (a
// ZooKeeper ensemble of 3, say).
func StartSized(t testing.TB, sizes map[string]int, needs ...impl.Need) impl.Servers {
	t.Helper()
	servers := impl.Servers{}
	spec := sandbox.Spec{}
	var sandboxed []impl.Need
	for _, n := range needs {
		if n.Count <= 0 {
			n.Count = 1
		}
		if v := os.Getenv(impl.EnvName(n.Role)); v != "" {
			servers[n.Role] = strings.Split(v, ",")
			continue
		}
		k, ok := sandbox.LookupKind(n.Kind)
		if !ok {
			t.Fatalf("sandboxtest: no server kind %q", n.Kind)
		}
		want := n.Count
		if k.Ensemble {
			want = max(sizes[n.Kind], 1)
		}
		spec[n.Kind] = max(spec[n.Kind], want)
		sandboxed = append(sandboxed, n)
	}
	if len(spec) == 0 {
		return servers
	}
	f := StartFleet(t, spec)
	for _, n := range sandboxed {
		k, _ := sandbox.LookupKind(n.Kind)
		addrs := f.Addrs(n.Kind)
		if !k.Ensemble {
			addrs = addrs[:n.Count]
		}
		servers[n.Role] = addrs
	}
	return servers
}

// StartFleet starts spec for this test and returns the fleet itself, for
// tests that stop, kill or restart servers; the cleanup closes it. Tests
// run the fast profile unless $LOCKBENCH_SERVERS says otherwise: they
// test behaviour, not a production server's speed, and a JVM on its
// quick compiler starts sooner.
func StartFleet(t testing.TB, spec sandbox.Spec) *sandbox.Fleet {
	t.Helper()
	return StartProfile(t, sandbox.EnvOr(sandbox.ProfileFast), spec)
}

// StartProfile is StartFleet in profile p.
func StartProfile(t testing.TB, p sandbox.Profile, spec sandbox.Spec) *sandbox.Fleet {
	t.Helper()
	f, err := sandbox.Start(sandbox.WithProfile(context.Background(), p), spec)
	if errors.Is(err, sandbox.ErrMissing) {
		Missing(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// Require ends the test unless every server kind named is installed (see
// sandbox.Installed), for tests that start servers other than through
// Start: the lockbench command, say.
func Require(t testing.TB, kinds ...string) {
	t.Helper()
	for _, k := range kinds {
		if err := sandbox.Installed(k); err != nil {
			Missing(t, err)
		}
	}
}

// Missing ends a test that needs a server that is not installed: a skip
// that says why, or with CI set a failure, since there a skip would let a
// run that tested nothing of the server pass.
func Missing(t testing.TB, err error) {
	t.Helper()
	if sandbox.MissingFails() {
		t.Fatalf("sandboxtest: %v (CI is set: a missing server fails the test)", err)
	}
	t.Skip("sandboxtest: ", err)
}
