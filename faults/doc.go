// Package faults runs lockbench's fault scenarios against real servers:
// what a crash, a pause, a failover, a restart, added latency and a
// partition cost each lock implementation, and whether mutual exclusion
// survives them.
//
// Importing it registers one engine.Fault per scenario (crash, pause,
// failover, restart, latency, partition, freeze); the lockbench command
// imports it where it assembles the program (cmd/lockbench/cli), beside the
// drivers of impl/all, which know no fault. Each runner repeats its script
// CellSpec.Repeat times and returns one result.Cell whose Faults hold what
// it measured, typed, in the struct of its scenario (result.CrashFigures,
// …) beside the settings it ran with. Runners measure and write no prose:
// package report phrases the figures (report.FaultSentence).
//
// A scenario applies by what the driver and the kind of its servers
// declare, never by a name: the lease (impl.Caps), fencing tokens from the
// lock or a counter its servers keep (impl.Need.Fence), a quorum of
// masters, a kind that can replicate and promote or tell an ensemble's
// members apart (sandbox.Kind), a client that can say how many masters
// granted it (an optional interface on the Locker). A lock that offers
// none of what a scenario needs is skipped with a note. The package
// imports no driver and speaks no server's protocol.
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
//
// A lock that lasts as long as its holder's connection (impl.LeaseConn:
// PostgreSQL advisory locks, GET_LOCK) has no such bound. Crash ends the
// holder's connection both ways, a reset and a silence, and states the
// TCP keepalive the server keeps on it (impl.Keepaliver); pause measures
// what a holder that keeps its lock through a stall costs its waiters;
// restart restarts the lock's server under the holder.
package faults
