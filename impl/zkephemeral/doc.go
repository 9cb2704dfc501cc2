// Package zkephemeral implements zk-ephemeral, the simplest ZooKeeper lock
// and the one the recipes warn against: one ephemeral node at the lock's
// path. Acquire creates it; if it exists, the client sets an exists watch
// on it and waits. Its deletion — a release, or the holder's session
// expiring — wakes every waiter, and they race to create it again: one
// wins, the others' creates fail with NodeExists and they watch again.
//
// Draining a burst of n therefore costs n(n−1)/2 wake-ups, like zk-naive,
// and as many failed creates (each client fails once on arrival and once
// per release it loses), counted in Counters.FailedCreates; the theory
// declares the wake-ups only, failed creates are as measured. Each node is
// the same path, created afresh, with no sequence to fence with; its
// token is the zxid that created it (its czxid), which grows with every
// grant. go-zookeeper's Create does not return it, so a grant costs an
// exists call more than the recipe's create.
package zkephemeral
