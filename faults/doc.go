// Package faults runs lockbench's fault scenarios against real servers:
// what a crash, a pause, a failover, a restart, added latency and a
// partition cost each lock implementation, and whether mutual exclusion
// survives them.
//
// Importing it registers one engine.Fault per scenario (crash, pause,
// failover, restart, latency, partition); the lockbench command
// imports it where it assembles the program (internal/cli), beside the
// drivers of impl/all, which know no fault. Each runner repeats its script
// CellSpec.Repeat times and returns one result.Cell whose Verdict says in a
// sentence what happened, with the figures in Faults.
//
// Runners put loopback proxies (Proxy) in front of servers to cut or delay
// a client's traffic, and start servers of their own with internal/sandbox
// when the script has to kill, restart or replicate one: a Redis master
// with an asynchronous replica (failover), five Redlock masters (failover,
// restart), a three-member ZooKeeper ensemble (failover, and partition when
// the run's ZooKeeper is a single server). Everything a runner starts it
// stops before returning, and every wait is bounded by the configured TTL
// or session timeout.
//
// Recovery times are of the order of the TTL (Redis locks) or the session
// timeout (ZooKeeper), whose defaults are 10 s; pass e.g. --ttl 2s
// --zk-session-timeout 2s for a quick run.
package faults
