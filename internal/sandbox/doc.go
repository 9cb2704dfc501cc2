// Package sandbox starts the real servers a run needs — redis-server
// processes and a ZooKeeper server or ensemble — on free loopback ports in a
// temporary directory, and stops them all again.
//
// It feels like httptest: Start returns a Fleet whose addresses are exported
// and whose Close stops everything. Nothing is persisted. Every process runs
// in its own process group with a parent-death signal, so it dies with
// lockbench even when lockbench is killed outright.
package sandbox
