package rueidislock_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	_ "github.com/lockbench/lockbench/faults" // the crash scenario
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/impl/rueidislock"
	"github.com/lockbench/lockbench/sandboxtest"
)

// A holder that dies holding the lock: its keys are no longer extended,
// so the waiter takes over once they expire — no sooner than half a
// KeyValidity after the holder's last extension (it extends every half),
// the fault's configured bound being KeyValidity itself, not the TTL —
// and the two never hold at once.
func TestCrashTakesOverAfterKeyValidity(t *testing.T) {
	const validity = time.Second
	servers := sandboxtest.Start(t, redis.Need)
	crash, _ := engine.LookupScenario("crash")
	c, err := engine.RunCell(context.Background(), engine.CellSpec{
		Impl: "rueidislock", Scenario: crash, Clients: 2, Repeat: 1, MaxTime: time.Minute,
		Config: impl.Config{Servers: servers, Namespace: t.Name(),
			Options: map[string]string{rueidislock.KeyValidity.Name: validity.String()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	f := c.Faults
	if f == nil || f.Crash == nil {
		t.Fatalf("no crash figures: %+v", f)
	}
	if f.ConfiguredMs != float64(validity.Milliseconds()) {
		t.Errorf("configured bound %v ms, want the KeyValidity, %d", f.ConfiguredMs, validity.Milliseconds())
	}
	if f.BoundSetting != "KeyValidity" {
		t.Errorf("bound named %q, want KeyValidity", f.BoundSetting)
	}
	if f.Crash.Unrecovered != 0 || f.RecoveryMs == nil || f.RecoveryMs.Count != 1 {
		t.Fatalf("crash figures %+v, recovery %+v: want one takeover", f.Crash, f.RecoveryMs)
	}
	if got, floor := f.RecoveryMs.Min, float64(validity.Milliseconds())/2; got < floor {
		t.Errorf("taken over %.0f ms after the crash, before the dead holder's keys could expire (%.0f ms at the least)", got, floor)
	}
	if c.SafetyViolations != 0 || c.Acquires != 2 {
		t.Errorf("violations %d %+v, acquires %d; want none and 2 (holder, then waiter)", c.SafetyViolations, c.Violations, c.Acquires)
	}
	t.Logf("taken over %.0f ms after the crash (KeyValidity %v)", f.RecoveryMs.Min, validity)
}
