// Package sandbox starts the real servers a run needs on free loopback
// ports in a temporary directory, and stops them all again. Each kind of
// server registers itself here (RegisterKind, one file a kind: Redis, a
// Redis Cluster, ZooKeeper, etcd, PostgreSQL, MariaDB, NATS and a
// kube-apiserver, under the names of package serverkind) with
// how to start, find, read and version it, and what fault scenarios may
// do to it (replicate, promote, ask an ensemble member its mode).
//
// It feels like httptest: Start returns a Fleet whose addresses are
// exported and whose Close stops everything. Nothing is persisted. Every
// process runs in its own process group with a parent-death signal, so it
// dies with lockbench even when lockbench is killed outright. Meter reads
// the servers' own counters and CPU time for a cell; whoever runs cells
// hands it over (engine.CellSpec.ServerKinds), as plan does.
package sandbox
