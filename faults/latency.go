package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

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

	acc := result.NewAccumulator(result.Cell{Impl: spec.Impl, Scenario: "latency", Clients: spec.Clients, Locks: loop.Locks, Theory: s.Theory})
	var first, marked result.Cell // the first repeat, the first with a mark
	server := map[string]int64{}
	for r := range spec.Repeat {
		ps, err := newProxies(targets, delay, jitter, cfg.Seed+uint64(r))
		if err != nil {
			return acc.Cell(), err
		}
		if len(ps) > 0 {
			loop.Config.Servers = s.with(cfg.Servers, ps.Addrs())
		}
		loop.Config.Namespace = fmt.Sprintf("%s-latency-%d", cfg.Namespace, r)
		loop.OnInterval = intervalsInto(acc, spec.OnInterval)
		res, err := engine.RunCellDetail(ctx, loop)
		ps.Close()
		if res.Impl != "" {
			addRepeat(acc, server, res.Cell)
			if r == 0 {
				first = res.Cell
			}
			if marked.Impl == "" && (res.Truncated != "" || res.Finding != "" || res.ServerNote != "") {
				marked = res.Cell
			}
		}
		if err != nil {
			return acc.Cell(), err
		}
	}
	out := acc.Cell()
	if len(server) > 0 {
		out.Server = server
	}
	// The generator's health and the implementation's own distributions
	// are summaries that do not add up: the first repeat's stand.
	out.Generator, out.Distributions = first.Generator, first.Distributions
	// What one repeat says of itself — cut short, a finding, counters
	// unread — is said of the cell.
	out.Truncated, out.Finding, out.Livelock, out.ServerNote = marked.Truncated, marked.Finding, marked.Livelock, marked.ServerNote
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

// intervalsInto feeds each closing interval's histograms of a repeat to
// acc — the only way to them: a cell run with OnInterval set returns no
// intervals, and the interval's histograms are reused once the callback
// returns — then hands the interval on to next (the run's .hlog) as the
// latency cell's.
func intervalsInto(acc *result.Accumulator, next func(result.Cell, time.Time, result.Interval)) func(result.Cell, time.Time, result.Interval) {
	return func(c result.Cell, start time.Time, iv result.Interval) {
		// The cell's one goroutine of intervals calls this, and the repeat
		// ends only after its last call: acc is not shared meanwhile.
		for tag, h := range map[string]*hdrhistogram.Histogram{result.TagAcquire: iv.Acquire, result.TagRelease: iv.Release,
			result.TagHandoff: iv.Handoff, result.TagAbandon: iv.Abandon, result.TagRenew: iv.Renew} {
			acc.AddHistogram(tag, h)
		}
		if next != nil {
			c.Scenario = "latency"
			next(c, start, iv)
		}
	}
}

// addRepeat adds a repeat's counts to acc, its clients' acquisitions by
// client id, and the servers' counter deltas to server; its histograms
// came through intervalsInto.
func addRepeat(acc *result.Accumulator, server map[string]int64, c result.Cell) {
	acc.AddMeasured(time.Duration(c.DurationS * float64(time.Second)))
	var per int64
	if c.Fairness != nil {
		for _, n := range c.Fairness.PerClient {
			per += n
		}
	}
	if c.Fairness != nil && per == c.Acquires {
		for i, n := range c.Fairness.PerClient {
			acc.AddClient(i, n, nil, result.Counts{})
		}
		acc.AddClient(-1, 0, c.ErrorsByClass, c.Counts)
	} else {
		acc.AddClient(-1, c.Acquires, c.ErrorsByClass, c.Counts)
	}
	acc.AddViolations(c.SafetyViolations, c.Violations...)
	acc.AddVectors(c.Vectors)
	acc.AddAbandon(c.Abandon)
	acc.AddRenew(c.Renew)
	for k, v := range c.Server {
		server[k] += v
	}
}
