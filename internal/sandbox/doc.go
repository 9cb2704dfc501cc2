// Package sandbox starts the real servers a run needs on free loopback
// ports in a temporary directory, and stops them all again. It is the
// core: process lifecycle (Launch, Stop, Kill, Freeze, Restart), the CPU
// time of the processes that serve an address, the server profiles, and
// the registry of kinds. Each kind of server is a package of its own
// beside it (internal/sandbox/redis, …/zookeeper, …), which registers with
// RegisterKind how to start, find, read and version its servers, what its
// counters mean (Kind.Counts), and what fault scenarios may do to it
// (replicate, promote, ask an ensemble member its mode); package
// internal/sandbox/kinds imports them all.
//
// It feels like httptest: Start returns a Fleet whose addresses are
// exported and whose Close stops everything. Nothing is persisted. Every
// process runs in its own process group with a parent-death signal, so it
// dies with lockbench even when lockbench is killed outright. Meter reads
// the servers' own counters and CPU time for a cell; whoever runs cells
// hands it over (engine.CellSpec.ServerKinds), as plan does.
package sandbox
