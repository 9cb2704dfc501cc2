// Package lockbench is the small facade the root benchmarks and library
// users run cells through: RunCell runs one implementation × scenario ×
// clients cell and returns its result, with the servers' own counters
// when its spec is given SandboxKinds. Running a whole plan — a matrix, a
// sandbox, shards and their merge, a capacity search — is package plan's.
package lockbench
