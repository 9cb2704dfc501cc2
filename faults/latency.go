package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/scenarios"
)

// DefaultLatencyDuration is the measured time of each latency repeat when
// the spec sets neither Duration nor Acquires.
const DefaultLatencyDuration = 2 * time.Second

// runLatency: every server the implementation uses sits behind a proxy
// that holds each chunk net-delay ± net-jitter in each direction, and the
// clients run the closed loop of the "hot" scenario through them (spec's
// Duration or Acquires, Hold, Think, Locks, Warmup). A round trip crosses
// the proxy twice, so an acquisition costs at least 2 × delay per round
// trip it needs. Repeats are merged: counts add up and the latency
// distributions are merged from the cells' per-second histograms.
func runLatency(ctx context.Context, spec engine.CellSpec, s subject) (result.Cell, error) {
	cfg := spec.Config
	delay, err := optDuration(cfg, OptNetDelay, DefaultNetDelay)
	if err != nil {
		return result.Cell{}, err
	}
	jitter, err := optDuration(cfg, OptNetJitter, 0)
	if err != nil {
		return result.Cell{}, err
	}
	targets := s.targets(cfg.Servers)
	if len(s.Needs) > 0 && len(targets) == 0 {
		return result.Cell{}, needServers(spec, s)
	}
	loop := spec
	loop.Scenario = scenarios.Hot
	if loop.Duration <= 0 && loop.Acquires <= 0 {
		loop.Duration = DefaultLatencyDuration
	}

	base := result.Cell{Impl: spec.Impl, Scenario: "latency", Clients: spec.Clients, Locks: loop.Locks, Theory: s.Theory}
	out, repeats, err := engine.RunRepeats(ctx, loop, base, func(r int, rs *engine.CellSpec) (func(), error) {
		ps, err := newProxies(targets, delay, jitter, cfg.Seed+uint64(r))
		if err != nil {
			return nil, err
		}
		if len(ps) > 0 {
			rs.Config.Servers = s.with(cfg.Servers, ps.Addrs())
		}
		rs.Config.Namespace = fmt.Sprintf("%s-latency-%d", cfg.Namespace, r)
		return func() { ps.Close() }, nil
	})
	if err != nil {
		return out, err
	}
	// The generator's health and the implementation's own distributions
	// are summaries that do not add up: the first repeat's stand.
	if len(repeats) > 0 {
		out.Generator, out.Distributions = repeats[0].Generator, repeats[0].Distributions
	}
	out.Faults = &result.Faults{Repeats: spec.Repeat, Details: map[string]float64{
		"net_delay_ms": ms(delay), "net_jitter_ms": ms(jitter), "proxies": float64(len(targets)),
	}}
	var v string
	if len(targets) == 0 {
		v = fmt.Sprintf("%s has no servers, so no delay applied: ", out.Impl)
	} else {
		v = fmt.Sprintf("%s behind proxies adding %s ± %s each way (at least %s per round trip): ",
			out.Impl, delay, jitter, 2*delay)
	}
	v += fmt.Sprintf("acquire p50 %s, p99 %s, %s by %s at %.0f/s, %s",
		result.Dur(out.AcquireLatencyUs.P50), result.Dur(out.AcquireLatencyUs.P99),
		plural(out.Acquires, "acquisition"), plural(int64(out.Clients), "client"), out.AcquiresPerS,
		plural(out.Errors, "error"))
	if out.Acquires > 0 && out.RoundTripsPerAcquire > 0 {
		v += fmt.Sprintf(", %.1f round trips per acquisition", out.RoundTripsPerAcquire)
	}
	out.Verdict = v + "; " + violationsClause(out)
	return out, nil
}
