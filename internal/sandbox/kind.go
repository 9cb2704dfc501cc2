package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/lockbench/lockbench/internal/serverkind"
)

// Kind is a kind of server the sandbox can start: how to start, check and
// stop it, what it is called on the command line, and how to read its own
// counters and version. Drivers name the kinds they need (impl.Need.Kind);
// the sandbox, `lockbench sandbox` and the cell runner work for any kind
// registered here.
type Kind struct {
	// Name is what drivers' needs say: "redis", "zookeeper".
	Name string
	// Flag is the kind's word on the command line: `lockbench sandbox
	// --FLAG N` starts N of it.
	Flag string
	// Ensemble says that N servers of the kind form one service (a
	// ZooKeeper ensemble) rather than N independent ones.
	Ensemble bool
	// SizeFlag, for an ensemble kind, is the `lockbench run` flag that
	// sets the sandboxed ensemble's size (--zk-ensemble); SizeUsage its help.
	SizeFlag, SizeUsage string
	// Default is how many `lockbench sandbox` starts unless told (1 when
	// 0): a Redis Cluster's 3 masters.
	Default int
	// CheckSize, if set, judges an ensemble size the user asks for; nil:
	// 1, or an odd number ≥ 3 that can form a majority.
	CheckSize func(n int) error
	// Start starts n servers (or an ensemble of n) under dir and returns
	// once every one answers. Servers it returns with an error are stopped
	// by the caller.
	Start func(ctx context.Context, dir string, n int) ([]*Server, error)
	// Find, if set, looks for what Start needs without starting anything:
	// nil when it is installed, an error wrapping ErrMissing when not. The
	// install step (`lockbench sandbox --check`) and the tests ask it, so
	// that both mean by "installed" what Start does.
	Find func() error
	// Stats, if set, reads the servers' own counters (cumulative, summed
	// over addrs). It returns an error wrapping ErrStatsRefused when a
	// server will not say.
	Stats func(ctx context.Context, addrs []string) (map[string]int64, error)
	// Counts, if set, says what the kind's counters mean, from their
	// deltas over a cell (Stats's names): the messages its servers
	// handled in the kind's own unit, the watches they fired, their
	// snapshot forks. It is the one reader of the kind's counter names.
	Counts func(delta map[string]int64) serverkind.Counts
	// Version, if set, asks one server what it is ("redis 7.0.15").
	Version func(ctx context.Context, addr string) string
	// Settings, if set, says how Start configures the kind's servers in
	// profile p where that changes the figures ("forceSync=yes"), for
	// meta.json and the report.
	Settings func(p Profile) string

	// What fault scenarios may do to servers of the kind beyond stopping,
	// killing, freezing and restarting them, which every kind allows.

	// Replicate, if set, starts a server that follows of asynchronously,
	// connecting to it through via (a proxy in front of of, so that a
	// caller can cut the link; empty: of's own address), and returns once
	// the copy is in sync. The caller stops it.
	Replicate func(ctx context.Context, of *Server, via string) (*Server, error)
	// Promote, if set, makes a server Replicate started a master of its
	// own, as a failover would.
	Promote func(ctx context.Context, addr string) error
	// Mode, if set, asks one member of an ensemble its part in it
	// ("leader", "follower", "standalone"). A kind sets it whose clients
	// each talk to one member and move their session to another when that
	// member is lost (ZooKeeper), so that a fault can take a member away
	// from under a client.
	Mode func(ctx context.Context, addr string) (string, error)
}

// ErrStatsRefused means a server refused to report its counters.
var ErrStatsRefused = errors.New("sandbox: server refused to report counters")

var (
	kindsMu sync.RWMutex
	kinds   = map[string]Kind{}
)

// RegisterKind makes a server kind available. Like impl.Register it panics
// on an empty name, a nil Start or a duplicate: programming errors.
func RegisterKind(k Kind) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if k.Name == "" || k.Start == nil || k.Flag == "" {
		panic("sandbox: RegisterKind without a name, a flag or Start")
	}
	if _, dup := kinds[k.Name]; dup {
		panic(fmt.Sprintf("sandbox: RegisterKind(%q) twice", k.Name))
	}
	kinds[k.Name] = k
}

// LookupKind returns the kind registered under name.
func LookupKind(name string) (Kind, bool) {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	k, ok := kinds[name]
	return k, ok
}

// Kinds returns every registered kind, sorted by name.
func Kinds() []Kind {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	out := make([]Kind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b Kind) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	return out
}

// Installed reports whether the kind called name is installed, by its
// Find: nil, or an error wrapping ErrMissing that says how to install it.
// A kind without Find counts as installed; Start will say otherwise.
func Installed(name string) error {
	k, ok := LookupKind(name)
	if !ok {
		return fmt.Errorf("sandbox: no server kind %q", name)
	}
	if k.Find == nil {
		return nil
	}
	return k.Find()
}

// MissingFails reports whether a test that needs a server that is not
// installed must fail rather than skip: so in CI (the CI variable set, as
// .ci/run and CI services set it), where a skipped server would pass a
// run that tested nothing of it.
func MissingFails() bool { return os.Getenv("CI") != "" }
