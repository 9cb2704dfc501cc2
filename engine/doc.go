// Package engine runs cells: one implementation under one scenario with a
// number of clients, each client on its own connection, connected before
// the clock starts. It records latencies into HdrHistograms without locks
// or allocation on the recording path, watches mutual exclusion, reads the
// servers' own counters around each cell, and streams each second's
// histograms out as it closes.
//
// Load scenarios (hot, keys, burst, rate) are types of this package, one
// file each, behind Scenario; fault scenarios register through
// RegisterFault from a package of their own (faults), which this package
// does not know. The root package lockbench re-exports what callers need
// and plans matrices of cells.
package engine
