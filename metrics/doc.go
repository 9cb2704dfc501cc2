// Package metrics serves a run's figures live on a Prometheus endpoint
// (lockbench run --metrics-addr): counters, gauges and latency histograms
// per cell, labelled impl, scenario, clients, shard and run_id.
//
// It reads only what the engine already publishes — the progress
// snapshots, the per-second intervals the collector closes, and the cell's
// result — so the recording path stays as it is: no lock, no allocation.
// When a cell ends its counters are set to the figures summary.json holds.
package metrics
