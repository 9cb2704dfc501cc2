// Package redlock implements the Redlock algorithm over M independent Redis
// masters (M odd, at least 3): SET key token NX PX ttl on every master, each
// under a short timeout, and the lock is held when a majority said OK and
// some validity is left after the time spent asking and an allowance for
// clock drift. A failed attempt is undone on every master with the Lua
// compare-and-delete before the client polls again after a jittered pause.
//
// When fewer than a majority of masters answer at all, Acquire fails at
// once with an error wrapping impl.ErrNoQuorum instead of polling forever;
// one or two dead masters out of five only slow it down.
//
// Besides impl.Counters, each Locker keeps Stats (masters granted per
// attempt, validity left at grant), read through impl.Distributions or
// StatsReporter.
package redlock
