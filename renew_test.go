package lockbench_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/impl/redlock"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/sandboxtest"
)

// A holder that keeps a TTL lock for twice the TTL overlaps the next
// holder when it does not renew — the checker sees it — and never when it
// renews every TTL/3; the renewals are counted, with their latency.
func TestRenewKeepsTheLeasePastItsTTL(t *testing.T) {
	srv := sandboxtest.Start(t, redis.Need, redlock.Masters)
	hot, _ := lockbench.LookupScenario("hot")
	for _, name := range []string{"redis", "redlock"} {
		for _, renew := range []bool{false, true} {
			c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
				Impl: name, Scenario: hot, Clients: 3, Duration: 2 * time.Second, Hold: 600 * time.Millisecond,
				Renew:       renew,
				ServerKinds: sandbox.Meter{},
				Config: impl.Config{Servers: srv, TTL: 300 * time.Millisecond, Seed: 1,
					Namespace: "renew-" + name + map[bool]string{true: "-on", false: "-off"}[renew]},
			})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case !renew && (c.SafetyViolations == 0 || c.Renew != nil):
				t.Errorf("%s without --renew: %d violations holding twice the TTL, renew %+v", name, c.SafetyViolations, c.Renew)
			case renew && (c.SafetyViolations != 0 || c.Renew == nil || c.Renew.Count == 0 || c.Renew.LatencyUs.Max <= 0):
				t.Errorf("%s with --renew: %d violations, renew %+v", name, c.SafetyViolations, c.Renew)
			}
		}
	}
}

// A holder frozen past its lease (a GC pause, a stopped VM) learns at its
// next renewal that the lock is gone — another client took it meanwhile —
// and stops working: the renewal counts as lost.
func TestRenewAfterAFreezeFindsTheLockLost(t *testing.T) {
	srv := sandboxtest.Start(t, redis.Need)
	registerFreezing()
	hot, _ := lockbench.LookupScenario("hot")
	c, err := lockbench.RunCell(context.Background(), lockbench.CellSpec{
		Impl: "test-redis-freezing", Scenario: hot, Clients: 2, Duration: 1500 * time.Millisecond,
		Hold: 600 * time.Millisecond, Renew: true,
		ServerKinds: sandbox.Meter{},
		Config:      impl.Config{Servers: srv, TTL: 200 * time.Millisecond, Namespace: "renew-freeze"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Renew == nil || c.Renew.Lost == 0 || c.Renew.Errors != 0 {
		t.Fatalf("renew %+v: a holder frozen past its TTL did not learn it lost the lock", c.Renew)
	}
}

var freezing sync.Once

// registerFreezing registers redis whose holders freeze for 1.5 TTL at
// their first renewal of each lease.
func registerFreezing() {
	freezing.Do(func() {
		d, _ := impl.Lookup("redis")
		d.Name, d.Description = "test-redis-freezing", "redis whose holders freeze past their TTL"
		inner := d.New
		d.New = func(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
			l, err := inner(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return freezingLocker{Locker: l, ttl: cfg.WithDefaults().TTL}, nil
		}
		impl.Register(d)
	})
}

type freezingLocker struct {
	impl.Locker
	ttl time.Duration
}

func (l freezingLocker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	lease, err := l.Locker.Acquire(ctx, name)
	if err != nil {
		return nil, err
	}
	return &freezingLease{Lease: lease, ttl: l.ttl}, nil
}

type freezingLease struct {
	impl.Lease
	ttl    time.Duration
	frozen bool
}

func (s *freezingLease) Renew(ctx context.Context) error {
	if !s.frozen {
		s.frozen = true
		time.Sleep(s.ttl * 3 / 2)
	}
	return s.Lease.(impl.Renewer).Renew(ctx)
}
