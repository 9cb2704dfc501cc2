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
	out.Faults = &result.Faults{Repeats: spec.Repeat,
		Latency: &result.LatencyFigures{NetDelayMs: ms(delay), NetJitterMs: ms(jitter), Proxies: len(targets)}}
	return out, nil
}
