// Package lockbench runs distributed-lock implementations side by side and
// measures them: latency in HdrHistogram histograms, and counts of
// notifications, round trips, retries and safety violations.
//
// It is the library behind cmd/lockbench and the root benchmarks. RunCell
// runs one implementation × scenario × clients cell; Run runs a matrix of
// cells over given servers or a sandbox it starts itself.
package lockbench

// Version is lockbench's version, set at build time with
// -ldflags "-X github.com/lockbench/lockbench.Version=…".
var Version = "0.1.0-dev"
