// Package plan runs a lockbench plan: a matrix of implementations ×
// scenarios × client counts over the servers it is given or a sandbox it
// starts. It validates the plan once (Plan.Validate), provisions the
// servers, runs each cell through the engine and keeps its results and
// interval logs as they come, runs this process's share of a sharded run,
// and merges the shards of one (Merge). A capacity search (Capacity,
// RunCapacity) runs its trials as one-cell plans over servers provisioned
// once, with package capacity deciding where to search next.
package plan

// Version is lockbench's version, set at build time with
// -ldflags "-X github.com/lockbench/lockbench/plan.Version=…".
var Version = "0.1.0-dev"
