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

	acq, rel := newLatencyHist(), newLatencyHist()
	var out result.Cell
	for r := range spec.Repeat {
		ps, err := newProxies(targets, delay, jitter, cfg.Seed+uint64(r))
		if err != nil {
			return out, err
		}
		if len(ps) > 0 {
			loop.Config.Servers = s.with(cfg.Servers, ps.Addrs())
		}
		loop.Config.Namespace = fmt.Sprintf("%s-latency-%d", cfg.Namespace, r)
		res, err := engine.RunCellDetail(ctx, loop)
		ps.Close()
		if err != nil {
			return out, err
		}
		for _, iv := range res.Intervals {
			acq.Merge(iv.Acquire)
			rel.Merge(iv.Release)
		}
		out = mergeCells(out, res.Cell, r == 0)
	}
	out.Scenario = "latency"
	if acq.TotalCount() > 0 {
		out.AcquireLatencyUs = result.LatencyOf(acq)
	}
	if rel.TotalCount() > 0 {
		out.ReleaseLatencyUs = result.LatencyOf(rel)
	}
	if out.DurationS > 0 {
		out.AcquiresPerS = float64(out.Acquires) / out.DurationS
	}
	if out.Acquires > 0 {
		out.RetriesPerAcquire = float64(out.Retries) / float64(out.Acquires)
		out.NotificationsPerAcquire = float64(out.Notifications) / float64(out.Acquires)
		out.RoundTripsPerAcquire = float64(out.RoundTrips) / float64(out.Acquires)
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

func newLatencyHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
}

// mergeCells adds c's counts to into; first takes c as it is.
func mergeCells(into, c result.Cell, first bool) result.Cell {
	if first {
		if c.ErrorsByClass == nil {
			c.ErrorsByClass = map[string]int64{}
		}
		return c
	}
	into.DurationS += c.DurationS
	into.Acquires += c.Acquires
	into.Errors += c.Errors
	for k, v := range c.ErrorsByClass {
		into.ErrorsByClass[k] += v
	}
	into.Counts = into.Counts.Add(c.Counts)
	into.SafetyViolations += c.SafetyViolations
	for _, v := range c.Violations {
		if len(into.Violations) < result.MaxViolationsKept {
			into.Violations = append(into.Violations, v)
		}
	}
	if into.Server != nil {
		for k, v := range c.Server {
			into.Server[k] += v
		}
	}
	if into.Vectors == nil && len(c.Vectors) > 0 {
		into.Vectors = map[string][]int64{}
	}
	for k, v := range c.Vectors {
		for len(into.Vectors[k]) < len(v) {
			into.Vectors[k] = append(into.Vectors[k], 0)
		}
		for i, n := range v {
			into.Vectors[k][i] += n
		}
	}
	// Distributions are summaries and cannot be merged: keep the first's.
	return into
}
