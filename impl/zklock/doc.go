// Package zklock implements zk-lock: go-zookeeper's own lock recipe,
// zk.Lock (zk.NewLock(conn, path, acl)), on a session of its own per
// client, beside zk-pred as redsync stands beside redlock. It queues
// ephemeral sequential nodes and watches the predecessor, as zk-pred does;
// what differs is the library's code, which is what this driver measures.
//
// zk.Lock.Lock takes no context and cannot be cancelled: it waits on its
// watch until the lock is its. Acquire runs it in a goroutine; when ctx is
// done first, Acquire closes the client's session — the only way to take
// the queued node out of the queue, which also wakes the waiter behind it
// — returns ctx's error, and opens a new session in the background, which
// the next Acquire waits for. A given-up Acquire therefore costs a session
// (closing one, opening one) where zk-pred deletes one node. An error from
// Lock closes the session too: the library leaves its node queued when a
// request fails.
//
// Closing sessions has a cost in the counts too: when waiters give up at
// the same moment (every waiter when a cell ends), the server fires the
// watch of a waiter whose own session it is closing, and the notification
// is never delivered. The server then reports more watch triggers than the
// clients received (a note under the cell's row); zk-pred, which deletes its node and
// keeps its session, does not lose them.
//
// The library keeps its wait to itself, so Settled reads it off the
// session's traffic (see armedState). zk.Lock does not expose its node's
// sequence either: the driver has no fencing token.
package zklock
