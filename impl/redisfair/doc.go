// Package redisfair implements Redisson's fair lock (RedissonFairLock) on
// one Redis server, in Go and Lua, so that its costs can be measured beside
// the other locks without a JVM.
//
// Besides the lock itself (a hash: owner → re-entry count, with a TTL) the
// fair lock keeps a queue of waiting owners (the list
// redisson_lock_queue:{name}) and, for each, when its place expires (the
// sorted set redisson_lock_timeout:{name}). The acquire script first drops
// waiters whose place expired from the queue's head, grants the lock only
// when it is free and the queue is empty or the caller is at its head,
// and otherwise queues the caller, if it is not queued already, with a
// place that expires the fair-wait (Redisson's fairLockWaitTimeout, 5 min by default) after
// the one ahead of it, and returns how long to wait. The release script
// publishes only on the head waiter's own channel
// (redisson_lock__channel:{name}:<owner>), so a burst of n costs n−1
// messages, one per hand-off, like ZooKeeper's predecessor watch.
//
// Every simulated client is a Redisson instance of its own: a command
// connection and a subscription connection, and an instance id of its own;
// each Acquire is an owner of its own (<instance id>:<n>, Redisson's
// <uuid>:<thread id>), so that a stale lease can never release a later
// grant. As in Redisson, an Acquire tries once, and only when it is queued
// subscribes to its own channel — on the subscription connection,
// confirmed by the server before the next try — then waits for a message
// or for the time the script returned, tries again, and unsubscribes once
// granted.
//
// Where this differs from Redisson, it says so in the scripts: there is no
// lease watchdog (a grant lives Config.TTL, a plain TTL lease); a release
// of a lease that had expired reports it lost rather than succeeding; and
// an Acquire that gives up (its ctx ended) removes itself as Redisson's
// acquireFailed does, and also gives back a grant whose reply it never
// read and, if it was the head of a free lock, tells the next waiter, whom
// Redisson would leave to wait out its place.
package redisfair
