package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redlock"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/scenarios"
)

// fleet is five redis-server masters shared by every test. Tests that stop
// masters restart them in t.Cleanup, so tests run one at a time.
var (
	fleet   *sandbox.Fleet
	skipMsg string
)

func TestMain(m *testing.M) {
	f, err := sandbox.Start(context.Background(), sandbox.Spec{Redis: 5})
	switch {
	case errors.Is(err, sandbox.ErrMissing):
		skipMsg = "redis-server not installed: apt-get install -y redis-server"
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if f != nil {
		f.Close()
	}
	os.Exit(code)
}

func needFleet(t *testing.T) *sandbox.Fleet {
	t.Helper()
	if skipMsg != "" {
		t.Skip(skipMsg)
	}
	return fleet
}

func init() {
	// TestMain assigns through this so needFleet sees the fleet.
	startHook = func(f *sandbox.Fleet) { fleet = f }
}

var startHook func(*sandbox.Fleet)
