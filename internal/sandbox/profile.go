package sandbox

import (
	"context"
	"fmt"
	"os"
)

// Profile is how the sandbox configures the servers it starts.
type Profile string

const (
	// ProfileProduction runs each server as its distribution ships it
	// wherever that changes the figures: durable writes (fsync), the
	// JVM's own defaults, Redis's snapshot rules. It is the default.
	ProfileProduction Profile = "production"
	// ProfileFast trades durability and a warm JIT for start-up speed:
	// nothing fsynced, ZooKeeper's JVM on its quick compiler alone.
	// Quick work and most tests use it; its figures overstate what a
	// production server does.
	ProfileFast Profile = "fast"
)

// DefaultProfile is the profile when none is given.
const DefaultProfile = ProfileProduction

// EnvProfile names the variable that sets the default profile of the
// command's --servers flag and of the test helpers (sandboxtest).
const EnvProfile = "LOCKBENCH_SERVERS"

// ParseProfile reads a profile's name.
func ParseProfile(s string) (Profile, error) {
	switch p := Profile(s); p {
	case ProfileProduction, ProfileFast:
		return p, nil
	}
	return "", fmt.Errorf("sandbox: profile %q: want %s or %s", s, ProfileProduction, ProfileFast)
}

// EnvOr is the profile $LOCKBENCH_SERVERS names, or def when it is unset
// or names none.
func EnvOr(def Profile) Profile {
	if p, err := ParseProfile(os.Getenv(EnvProfile)); err == nil {
		return p
	}
	return def
}

type profileKey struct{}

// WithProfile returns ctx carrying p: Start, and every kind's Start
// below it, configure their servers by it. It travels in the context
// because Kind.Start's signature is shared by every kind, and a fault
// that starts servers of its own mid-run (a replica, a fresh ensemble)
// must start them as the run's.
func WithProfile(ctx context.Context, p Profile) context.Context {
	return context.WithValue(ctx, profileKey{}, p)
}

// ProfileOf is the profile ctx carries; when it carries none, the one
// $LOCKBENCH_SERVERS names, else DefaultProfile — so that a test suite
// run with LOCKBENCH_SERVERS=fast starts fast servers wherever it starts
// them (a fault's fresh ensemble included).
func ProfileOf(ctx context.Context) Profile {
	if p, ok := ctx.Value(profileKey{}).(Profile); ok && p != "" {
		return p
	}
	return EnvOr(DefaultProfile)
}

// Fast reports whether ctx asks for the fast profile.
func Fast(ctx context.Context) bool { return ProfileOf(ctx) == ProfileFast }

type envKey struct{}

// WithEnv returns ctx carrying environment variables (KEY=VALUE) that
// every server started with it gets besides lockbench's own: a fault that
// starts servers of its own with a shim preloaded (the clock jump) sets
// them here, for the same reason the profile travels in the context.
func WithEnv(ctx context.Context, env ...string) context.Context {
	return context.WithValue(ctx, envKey{}, env)
}

func envOf(ctx context.Context) []string {
	env, _ := ctx.Value(envKey{}).([]string)
	return env
}
