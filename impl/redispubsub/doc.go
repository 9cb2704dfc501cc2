// Package redispubsub reproduces Redisson's RLock in Go: the lock is a
// Redis hash whose one field, the holder's id, counts its re-entries, and
// waiters do not poll but listen on a pub/sub channel for the holder's
// release.
//
// An Acquire runs the acquire script once; if the lock is held, the script
// returns the key's PTTL, and the client SUBSCRIBEs to
// redisson_lock__channel:{key} on its own subscription connection, waits
// for the server to confirm, and runs the script again, so that no release
// falls between its try and its wait. It then waits for a message or for
// the PTTL to pass, whichever comes first, and tries again. The release
// script decrements the holder's count and, at zero, deletes the key and
// PUBLISHes the unlock message, which every subscribed waiter receives:
// draining a burst of n waiters costs n(n−1)/2 deliveries, all but n−1 of
// them wasted.
//
// A waiter that misses the message — its subscription connection dropped
// and was re-made between the PUBLISH and its resubscription, Redisson
// issue #1763 — waits out the PTTL; so does every waiter of a holder that
// died, since a key that expires publishes nothing. Such waits are counted
// ("pttl_waits", and "pttl_wait_ms" for their length). The PUBLISH replies,
// how many subscribers each release reached, are summed
// ("publish_receivers") so that the clients' Notifications can be checked
// against the server's own figure.
//
// Each simulated client is its own Redisson instance: one command
// connection and one subscription connection, both its own.
package redispubsub
