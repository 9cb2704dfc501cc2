package main

import (
	"os/exec"
	"strings"
	"testing"
)

// default.pgo, the profile go build optimises lockbench with (see
// scripts/pgo-profile), must be a CPU profile of lockbench running the
// paths it is meant to speed up: a profile that no longer parses would
// fail every user's build, and one of another program, or of an idle run,
// would silently optimise nothing.
func TestDefaultPGOProfilesTheHotPaths(t *testing.T) {
	out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=400", "default.pgo").CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof default.pgo: %v\n%s", err, out)
	}
	top := string(out)
	if !strings.Contains(top, "Type: cpu") {
		t.Errorf("default.pgo is not a CPU profile:\n%.400s", top)
	}
	for _, want := range []string{
		"github.com/lockbench/lockbench/engine.",
		"github.com/lockbench/lockbench/impl/redis.",
		"github.com/lockbench/lockbench/impl/zk.",
		"github.com/lockbench/lockbench/impl/etcdmutex.",
		"github.com/redis/go-redis/v9.",
	} {
		if !strings.Contains(top, want) {
			t.Errorf("default.pgo has no samples in %s: regenerate it with bash scripts/pgo-profile", want)
		}
	}
}
