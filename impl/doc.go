// Package impl defines the lock a simulated client holds, the counters every
// implementation keeps, and the registry through which implementations are
// found by name.
//
// Each implementation lives in a subpackage and registers itself in init. Only
// cmd/lockbench and the root benchmarks import them all (see impl/all).
package impl
