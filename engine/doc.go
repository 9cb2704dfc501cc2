// Package engine runs cells: one implementation under one scenario with a
// number of clients, each client on its own connection, connected before
// the clock starts. It records latencies into HdrHistograms without locks
// or allocation on the recording path, watches mutual exclusion, reads the
// servers' own counters around each cell through the server kinds its spec
// is given (CellSpec.ServerKinds), and streams each second's histograms out
// as it closes.
//
// Load scenarios (hot, keys, burst, rate, abandon) live in package
// scenarios, one file each: each declares itself (LoadSpec) and makes a
// Shape per cell, holding that cell's state, while the runner gives every
// shape what they share — the Cell, its Clients, the hand-off Barrier.
// Fault scenarios register through RegisterFault from package faults.
// Neither is known to this package by name. The root package lockbench
// re-exports what benchmarks need; package plan runs matrices of cells.
package engine
