package redsync_test

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/impl/redlock"
	"github.com/lockbench/lockbench/impl/redsync"
)

// The redsync row runs redsync as shipped: the driver names the module,
// its defaults are the ones redsync.NewMutex sets in the release go.mod
// holds (read from the module's source, so an upgrade that changes them
// fails here), and with no flag given the row passes redsync none of its
// options but the retry-delay hook, whose draw is redsync's own.
func TestRedsyncRowUsesRedsyncDefaults(t *testing.T) {
	d, _ := impl.Lookup("redsync")
	if d.Library != redsync.Module {
		t.Fatalf("redsync row says library %q", d.Library)
	}
	src := moduleSource(t)
	for what, re := range map[string]string{
		"tries 32":           `tries:\s+32,`,
		"expiry 8s":          `expiry:\s+8 \* time\.Second,`,
		"drift factor 0.01":  `driftFactor:\s+0\.01,`,
		"timeout factor .05": `timeoutFactor:\s+0\.05,`,
		"delay from 50 ms":   `minRetryDelayMilliSec\s+=\s+50\b`,
		"delay to 250 ms":    `maxRetryDelayMilliSec\s+=\s+250\b`,
		"delay uniform":      `rand\.Intn\(maxRetryDelayMilliSec-minRetryDelayMilliSec\)\+minRetryDelayMilliSec`,
	} {
		if !regexp.MustCompile(re).MatchString(src) {
			t.Errorf("redsync's NewMutex no longer sets %s (%s): the row's defaults must follow", what, re)
		}
	}
	if c := redsync.Changed(impl.Config{}); len(c) != 0 {
		t.Errorf("with no flag, the row passes redsync %v", c)
	}
	changed := redsync.Changed(impl.Config{Options: map[string]string{"redsync-tries": "5", "redsync-expiry": "1s"}})
	if strings.Join(changed, ",") != "redsync-tries,redsync-expiry" {
		t.Errorf("flags changed %v, want redsync-tries,redsync-expiry", changed)
	}
	r := rand.New(rand.NewPCG(1, 2))
	lo, hi := time.Hour, time.Duration(0)
	for range 2000 {
		v := redsync.Delay(impl.Config{}, r)
		if v%time.Millisecond != 0 {
			t.Fatalf("delay %v is not whole milliseconds", v)
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo != 50*time.Millisecond || hi != 249*time.Millisecond {
		t.Errorf("2000 delays from %v to %v, want redsync's 50ms to 249ms", lo, hi)
	}
}

// moduleSource is redsync.go of the redsync release the build uses. The
// build just compiled it, so its source is in the module cache: failing
// to read it is a broken check, never a reason to skip one.
func moduleSource(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", redsync.Module).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", redsync.Module, err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "redsync.go"))
	if err != nil {
		t.Fatalf("redsync's source: %v", err)
	}
	return string(b)
}

// A lock taken through the row lives redsync's default 8 s on the masters,
// and a waiter gives up after redsync's 32 tries (31 pauses between them).
func TestRedsyncRowRunsRedsyncsExpiryAndTries(t *testing.T) {
	servers := masters(t)
	cfg := config(t, servers)
	a := newLocker(t, cfg)
	ctx := context.Background()
	held, err := a.Acquire(ctx, "e")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	cl := goredis.NewClient(&goredis.Options{Addr: servers[redlock.Masters.Role][0]})
	defer cl.Close()
	ttl, err := cl.PTTL(ctx, redis.Key(t.Name(), "e")).Result()
	if err != nil || ttl <= 7*time.Second || ttl > 8*time.Second {
		t.Errorf("the key's TTL %v (%v), want redsync's 8s", ttl, err)
	}
	cfg.Options = map[string]string{"redsync-retry-delay": "1ms"} // the tries, not their pauses, are checked
	c := newLocker(t, cfg)
	if _, err := c.Acquire(ctx, "e"); err == nil {
		t.Fatal("a waiter got a held lock")
	}
	if n := c.Counters().Retries.Load(); n != 31 {
		t.Errorf("%d retries before giving up, want redsync's 32 tries (31 retries)", n)
	}
}
