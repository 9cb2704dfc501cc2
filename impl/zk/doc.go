// Package zk implements ZooKeeper locks over one core: every client creates
// an ephemeral sequential node under /lockbench/<cell>/<lock>, and the
// lowest sequence number holds the lock.
//
//   - zk-naive watches all children and re-reads them on every change, so a
//     release wakes every waiter: n(n−1)/2 wake-ups to drain n waiters.
//   - zk-pred, the ZooKeeper recipe, watches only the node just before its
//     own: one wake-up per release, n−1 in all. A waiter whose last read
//     had only that node ahead takes the lock when it is deleted, without
//     reading the queue again (see Locker.Acquire).
//
// Notifications are counted where the connection receives them, so that
// with lockbench as the server's only client they equal the server's own
// watch-trigger counters (see ServerStats).
package zk
